"""Helpers of the admin tests."""

from django.urls import reverse

from audit.models import AuditEvent
from games.models import Bet, GameInstance, Round, SeedPair
from wallet.models import Account, LedgerEntry


def admin_url(model_or_obj, action: str = "changelist", *args) -> str:
    opts = model_or_obj._meta
    if action in ("change", "history", "delete", "void", "rotate_seed", "adjust", "verify", "account_history",
                  "approve", "reject") and not args:
        args = (model_or_obj.pk,)
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{action}", args=args)


def snapshot() -> tuple:
    """Everything an admin write could touch, to assert a rejected form wrote nothing."""
    return (
        tuple(GameInstance.objects.order_by("pk").values_list(
            "slug", "name", "status", "decks", "player_multiplier", "banker_multiplier", "tie_multiplier",
            "min_bet", "max_bet", "currency", "updated_at")),
        tuple(SeedPair.objects.order_by("pk").values_list("pk", "revealed_at", "next_nonce")),
        tuple(Round.objects.order_by("pk").values_list("pk", "status")),
        tuple(Bet.objects.order_by("pk").values_list("pk", "status")),
        tuple(Account.objects.order_by("pk").values_list("pk", "balance")),
        LedgerEntry.objects.count(),
        AuditEvent.objects.count(),
    )


GAME_FORM = {
    "slug": "second-table",
    "name": "Second table",
    "status": "active",
    "decks": "6",
    "player_multiplier": "2.0",
    "banker_multiplier": "1.95",
    "tie_multiplier": "8.0",
    "min_bet": "1.00",
    "max_bet": "500.00",
    "currency": "USD",
    "client_seed": "",
}


def change_form(game: GameInstance, **overrides) -> dict:
    data = {
        "name": game.name, "status": game.status, "decks": str(game.decks),
        "player_multiplier": str(game.player_multiplier), "banker_multiplier": str(game.banker_multiplier),
        "tie_multiplier": str(game.tie_multiplier), "min_bet": str(game.min_bet), "max_bet": str(game.max_bet),
        "currency": game.currency, "reason": "",
    }
    data.update(overrides)
    return data

