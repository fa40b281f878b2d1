"""Public pages, no log-in: players verify rounds and see every game's seed commitments."""

import shlex
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse

from audit.selectors import audit_public_head
from backoffice.replica_reads import read_alias
from games import selectors
from games.engine import dealt_hands, is_red, label_symbol, play_round, server_seed_hash, third_card_reasons
from games.forms import PublicVerifyForm

PAIR_ROUNDS_PER_PAGE = 500


def _card(label: str) -> dict:
    symbol = label_symbol(label)
    return {"label": label, "rank": symbol[:-1], "suit": symbol[-1], "red": is_red(label)}


def verify_url(*, server_seed: str, client_seed: str, nonce: int, decks: int) -> str:
    """The public page that recomputes this round: a link support can send a player."""
    query = urlencode({"server_seed": server_seed, "client_seed": client_seed, "nonce": nonce, "decks": decks})
    return f"{reverse('fairness')}?{query}#result"


def offline_command(*, server_seed: str, client_seed: str, nonce: int, decks: int, server_seed_hash: str) -> str:
    """The command line that repeats a verification with ``pf1_verify.py``, every argument quoted for a
    POSIX shell (``shlex.join``): pasted, it runs the verifier with exactly these values and nothing
    else, whatever the seed holds (quotes, ``$(…)``, backticks, ``;``). Options are written
    ``--name=value``, so that no value is read as an option. A client seed with a character that does
    not show (a format character such as a bidirectional override, a space other than U+0020) goes
    as the hexadecimal of its UTF-8 bytes (``--client-seed-hex``), so the line holds no invisible text."""
    seed = (f"--client-seed={client_seed}" if client_seed.isprintable()
            else f"--client-seed-hex={client_seed.encode('utf-8').hex()}")
    return shlex.join(["python3", "pf1_verify.py", f"--server-seed={server_seed}", seed, f"--nonce={nonce}",
                       f"--decks={decks}", f"--hash={server_seed_hash}"])


def _verified(data: dict, using: str) -> dict:
    result = play_round(data["server_seed"], data["client_seed"], data["nonce"], data["decks"])
    dealt = result.as_dict()
    seed_hash = server_seed_hash(data["server_seed"])
    hands = dealt_hands(result)
    return {
        **dealt,
        "server_seed_hash": seed_hash,
        "positions": [{"position": i, "hand": hand, **_card(label)}
                      for i, (label, hand) in enumerate(zip(dealt["cards"], hands, strict=True), start=1)],
        "player_hand": [_card(label) for label in dealt["player"]["cards"]],
        "banker_hand": [_card(label) for label in dealt["banker"]["cards"]],
        "reasons": third_card_reasons(result),
        "bet_events": selectors.deal_bet_events(result),
        "known_pair": selectors.seed_pair_revealed_by_hash(server_seed_hash=seed_hash, using=using),
        "inputs": data,
        "command": offline_command(server_seed=data["server_seed"], client_seed=data["client_seed"],
                                   nonce=data["nonce"], decks=data["decks"], server_seed_hash=seed_hash),
    }


def fairness(request):
    """The verifier (prefilled and run from the URL), each game's commitments and revealed seeds."""
    using = read_alias(request)  # public pages read a replica when one may serve
    form = PublicVerifyForm(request.GET or None)
    result = _verified(form.cleaned_data, using) if form.is_valid() else None
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(request, "public/fairness.html",
                  {"form": form, "result": result, "games": selectors.public_games(using=using),
                   "audit_log": audit_public_head(using=using)}, status=status)


def revealed_pair(request, server_seed_hash: str):
    """Every dealt round of a revealed pair, each a one-click, linkable verification."""
    using = read_alias(request)
    pair = selectors.seed_pair_revealed_by_hash(server_seed_hash=server_seed_hash, using=using)
    if pair is None:  # unknown, or not revealed yet: an active pair's rounds stay unlisted here
        raise Http404("No revealed seed pair has this hash.")
    page = Paginator(selectors.seed_pair_revealed_rounds(pair=pair, using=using), PAIR_ROUNDS_PER_PAGE).get_page(
        request.GET.get("page"))
    seed = pair.revealed_server_seed
    rounds = [{**round_, "verify_url": verify_url(server_seed=seed, client_seed=pair.client_seed,
                                                  nonce=round_["nonce"], decks=round_["decks"])}
              for round_ in page.object_list]
    return render(request, "public/pair.html", {"pair": pair, "page": page, "rounds": rounds,
                                                "counts": selectors.seed_pair_round_counts(pair=pair, using=using)})
