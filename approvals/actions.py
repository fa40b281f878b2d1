"""The actions a second person may have to approve: when each needs one, what it changes, how it applies.

Each is a service of a lower app (games.services.game_update, round_void,
wallet.services.account_adjust). A request is kept as the service's arguments (JSON-ready); applying
calls the same service with them, so it is validated again against the state at that moment.
"""

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.conf import settings

from approvals.choices import ApprovalAction
from core.services import model_diff
from games import services as game_services
from games.choices import BetStatus, RoundStatus
from games.models import Bet, GameInstance, Round, RtpPolicy
from wallet import services as wallet_services
from wallet.models import Account


@dataclass(frozen=True)
class ActionKind:
    action: ApprovalAction
    service: Callable
    # Approving applies the action: the approver must hold this permission too, not only "approve".
    permission: str
    object_type: str
    object_id: Callable[[dict], str]
    needs_approval: Callable[[dict], bool]
    changes: Callable[[dict], dict]  # what people read: before and after
    payload: Callable[[dict], dict]  # the service's arguments, JSON-ready
    arguments: Callable[[dict], dict]  # back from the payload


# --- Game configuration ---------------------------------------------------------------------------

def _game_diff(arguments: dict) -> dict:
    game = GameInstance.objects.get(pk=arguments["game_id"])
    diff = model_diff(game, arguments["changes"], view=GameInstance.configuration)
    return {name: {"before": diff.before[name], "after": after} for name, after in diff.after.items()}


# Renaming a game changes no payout or limit: it needs no second person.
UNGATED_GAME_FIELDS = {"name"}


def _game_needs_approval(arguments: dict) -> bool:
    changed = set(_game_diff(arguments)) - UNGATED_GAME_FIELDS
    return bool(changed) and Bet.objects.filter(round__game_id=arguments["game_id"]).exists()


def _game_value(name: str, stored):
    """A configuration value as the payload stores it (configuration(): the policy by name) back to Python."""
    if name == "rtp_policy":
        return None if stored is None else RtpPolicy.objects.get(name=stored)
    return GameInstance._meta.get_field(name).to_python(stored)


def _game_payload(arguments: dict) -> dict:
    return {"game_id": arguments["game_id"],
            "changes": {name: change["after"] for name, change in _game_diff(arguments).items()}}


GAME_UPDATE = ActionKind(
    action=ApprovalAction.GAME_UPDATE,
    service=game_services.game_update,
    permission="games.change_gameinstance",
    object_type="gameinstance",
    object_id=lambda arguments: str(arguments["game_id"]),
    needs_approval=_game_needs_approval,
    changes=_game_diff,
    payload=_game_payload,
    arguments=lambda payload: {
        "game_id": payload["game_id"],
        "changes": {name: _game_value(name, value) for name, value in payload["changes"].items()},
    },
)


# --- Balance adjustment ---------------------------------------------------------------------------

def _amount(arguments: dict) -> Decimal | None:
    try:
        value = Decimal(str(arguments["amount"]))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _adjustment_reaches_threshold(arguments: dict) -> bool:
    amount = _amount(arguments)  # a malformed amount goes on to the service, which names the field
    return amount is not None and abs(amount) >= settings.APPROVAL_ADJUSTMENT_THRESHOLD


def _adjustment_changes(arguments: dict) -> dict:
    account = Account.objects.get(external_id=arguments["external_id"])
    amount = _amount(arguments)
    return {"account": account.external_id, "amount": str(amount), "currency": account.currency,
            "balance": {"before": str(account.balance), "after": str(account.balance + amount)}}


ACCOUNT_ADJUST = ActionKind(
    action=ApprovalAction.ACCOUNT_ADJUST,
    service=wallet_services.account_adjust,
    permission="wallet.adjust_account",
    object_type="account",
    object_id=lambda arguments: str(Account.objects.values_list("pk", flat=True).get(
        external_id=arguments["external_id"])),
    needs_approval=_adjustment_reaches_threshold,
    changes=_adjustment_changes,
    payload=lambda arguments: {"external_id": arguments["external_id"], "amount": str(_amount(arguments))},
    arguments=lambda payload: dict(payload),
)


# --- Void of a dealt round ------------------------------------------------------------------------

def _void_changes(arguments: dict) -> dict:
    round_ = Round.objects.get(pk=arguments["round_id"])
    pending = round_.bets.filter(status=BetStatus.PENDING)
    return {"round": round_.pk, "game": round_.game.slug, "outcome": round_.outcome,
            "status": {"before": round_.status, "after": RoundStatus.VOID},
            "bets_refunded": pending.count(), "refund_total": str(sum(bet.stake for bet in pending))}


ROUND_VOID = ActionKind(
    action=ApprovalAction.ROUND_VOID,
    service=game_services.round_void,
    permission="games.void_round",
    object_type="round",
    object_id=lambda arguments: str(arguments["round_id"]),
    needs_approval=lambda arguments: Round.objects.filter(pk=arguments["round_id"],
                                                          status=RoundStatus.DEALT).exists(),
    changes=_void_changes,
    payload=lambda arguments: {"round_id": arguments["round_id"]},
    arguments=lambda payload: dict(payload),
)


KINDS = {kind.action: kind for kind in (GAME_UPDATE, ACCOUNT_ADJUST, ROUND_VOID)}
BY_SERVICE = {kind.service: kind for kind in KINDS.values()}


def kind_needing_approval(service, arguments: dict) -> ActionKind | None:
    """The action's kind when this request needs a second person under the settings, else None."""
    kind = BY_SERVICE.get(service)
    if kind is None or kind.action not in settings.APPROVAL_ACTIONS:
        return None
    return kind if kind.needs_approval(arguments) else None
