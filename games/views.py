"""Public pages, no log-in: players verify rounds and see every game's seed commitments."""

from django.shortcuts import render

from audit.selectors import audit_public_head
from games import selectors
from games.engine import is_red, label_symbol, verify_round
from games.forms import PublicVerifyForm


def _hand(cards):
    return [{"label": label, "symbol": label_symbol(label), "red": is_red(label)} for label in cards]


def fairness(request):
    """The current hash and revealed seeds of each game, and a form that recomputes any round."""
    form = PublicVerifyForm(request.GET or None)
    result = None
    if form.is_valid():
        data = form.cleaned_data
        dealt = verify_round(data["server_seed"], data["client_seed"], data["nonce"], data["decks"])
        result = {
            **dealt,
            "positions": [{"position": i, **card} for i, card in enumerate(_hand(dealt["cards"]), start=1)],
            "player_hand": _hand(dealt["player"]["cards"]),
            "banker_hand": _hand(dealt["banker"]["cards"]),
            "known_pair": selectors.seed_pair_revealed_by_hash(server_seed_hash=dealt["server_seed_hash"]),
        }
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(request, "public/fairness.html",
                  {"form": form, "result": result, "games": selectors.public_games(),
                   "audit_log": audit_public_head()}, status=status)
