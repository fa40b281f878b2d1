"""The actions a second person may have to approve: when each needs one, what it changes, how it applies.

Each is a service of a lower app (games.services.game_create, game_update, round_void,
wallet.services.account_adjust). A request is kept as the service's arguments (JSON-ready); applying
calls the same service with them, so it is validated again against the state at that moment.

Whether a request needs a second person is decided under the row locks of what the decision reads
(``lock``: the game, the account, the round), taken by the caller's transaction, in which the service
then runs when it needs nobody: nothing the decision read can change before the action.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.utils import timezone

from approvals.choices import ApprovalAction
from core.currencies import amount_text
from core.services import model_diff
from games import locks as game_locks
from games import services as game_services
from games.choices import BetStatus, GameStatus, RoundStatus
from games.models import Bet, GameInstance, Round, RtpPolicy
from games.paytable_text import side_bets_text
from wallet import locks as wallet_locks
from wallet import selectors as wallet_selectors
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
    # Locks what needs_approval reads (games/locks.py, wallet/locks.py), before it reads it.
    lock: Callable[[dict], object] = lambda arguments: None
    # {field: why} for each field the request changes whose value is no longer the one it was proposed
    # against (changes, arguments → moved), read under ``lock``; None when the action is a delta.
    moved: Callable[[dict, dict], dict] | None = None
    # The entry of settings.APPROVAL_ACTIONS that turns it on (its action's by default).
    setting: str = ""
    # What it acts on as people name it, kept with the request for its title (Approval.object_name).
    object_name: Callable[[dict], str] = lambda arguments: ""

    @property
    def enabled(self) -> bool:
        return (self.setting or self.action) in settings.APPROVAL_ACTIONS


# --- Game configuration ---------------------------------------------------------------------------

def _game_diff(arguments: dict) -> dict:
    game = GameInstance.objects.get(pk=arguments["game_id"])
    diff = model_diff(game, arguments["changes"], view=GameInstance.configuration)
    return {name: {"before": diff.before[name], "after": after} for name, after in diff.after.items()}


# Renaming a game changes no payout or limit: it needs no second person.
UNGATED_GAME_FIELDS = {"name"}


def _gated_game_fields(diff: dict) -> set:
    """The changed fields that need a second person: not a rename, and not a status other than active
    (suspending or retiring a game stops its play: a safety action one person may take at once)."""
    return {name for name, change in diff.items() if name not in UNGATED_GAME_FIELDS
            and not (name == "status" and change["after"] != GameStatus.ACTIVE)}


def _game_needs_approval(arguments: dict) -> bool:
    changed = _gated_game_fields(_game_diff(arguments))
    return bool(changed) and Bet.objects.filter(round__game_id=arguments["game_id"]).exists()


def _game_activates(arguments: dict) -> bool:
    """The change makes the game active again (it then opens rounds and takes bets)."""
    status = _game_diff(arguments).get("status")
    return status is not None and status["after"] == GameStatus.ACTIVE


def _shown(value) -> str:
    if isinstance(value, dict):  # a game's side bets: {side bet: {event: multiplier}}
        return side_bets_text(value)
    return "empty" if value in (None, "") else str(value)


def _game_moved(changes: dict, arguments: dict) -> dict:
    now = GameInstance.objects.get(pk=arguments["game_id"]).configuration()
    return {name: f"Changed since the request was proposed: it was {_shown(change['before'])}, "
                  f"it is now {_shown(now.get(name))}." for name, change in changes.items()
            if isinstance(change, dict) and now.get(name) != change.get("before")}


def _lock_game(arguments: dict) -> None:
    game_locks.lock_game(arguments["game_id"])


def _game_value(name: str, stored):
    """A configuration value as the payload stores it (configuration(): the policy by name) back to Python."""
    if name == "rtp_policy":
        return None if stored is None else RtpPolicy.objects.get(name=stored)
    return GameInstance._meta.get_field(name).to_python(stored)


def _game_payload(arguments: dict) -> dict:
    return {"game_id": arguments["game_id"],
            "changes": {name: change["after"] for name, change in _game_diff(arguments).items()}}


def _game_arguments(payload: dict) -> dict:
    return {"game_id": payload["game_id"],
            "changes": {name: _game_value(name, value) for name, value in payload["changes"].items()}}


GAME_UPDATE = ActionKind(
    action=ApprovalAction.GAME_UPDATE,
    service=game_services.game_update,
    permission="games.change_gameinstance",
    object_type="gameinstance",
    object_id=lambda arguments: str(arguments["game_id"]),
    needs_approval=_game_needs_approval,
    changes=_game_diff,
    payload=_game_payload,
    arguments=_game_arguments,
    lock=_lock_game,
    moved=_game_moved,
    object_name=lambda arguments: GameInstance.objects.values_list("slug", flat=True).get(pk=arguments["game_id"]),
)

# A change that makes a game active, even one that has taken no bet (setting "game.create").
GAME_ACTIVATE = replace(GAME_UPDATE, action=ApprovalAction.GAME_ACTIVATE, needs_approval=_game_activates,
                        setting=ApprovalAction.GAME_CREATE)


# --- A new game -----------------------------------------------------------------------------------

def _new_game(arguments: dict) -> dict:
    """The new game's slug, client seed and whole configuration (defaults included), JSON-ready."""
    fields = {name: value for name, value in arguments.items() if name not in ("slug", "client_seed")}
    return {"slug": arguments.get("slug"), "client_seed": arguments.get("client_seed"),
            "configuration": GameInstance(**fields).configuration()}


GAME_CREATE = ActionKind(
    action=ApprovalAction.GAME_CREATE,
    service=game_services.game_create,
    permission="games.add_gameinstance",
    object_type="gameinstance",
    object_id=lambda arguments: "",  # the game's id once applied
    object_name=lambda arguments: arguments.get("slug") or "",
    # A game created suspended takes no bet until it is activated, which is held then.
    needs_approval=lambda arguments: arguments.get("status", GameStatus.ACTIVE) == GameStatus.ACTIVE,
    changes=lambda arguments: {"slug": arguments.get("slug"), **_new_game(arguments)["configuration"]},
    payload=_new_game,
    arguments=lambda payload: {
        "slug": payload["slug"], "client_seed": payload["client_seed"],
        **{name: _game_value(name, value) for name, value in payload["configuration"].items()},
    },
)


# --- Balance adjustment ---------------------------------------------------------------------------

def _amount(arguments: dict) -> Decimal | None:
    try:
        value = Decimal(str(arguments["amount"]))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _window_total(external_id: str) -> Decimal:
    """The absolute total of the account's applied adjustments over the window
    (settings.APPROVAL_ADJUSTMENT_WINDOW_HOURS); 0 for no such account (the service names it)."""
    account_id = Account.objects.filter(external_id=external_id).values_list("pk", flat=True).first()
    if account_id is None:
        return Decimal(0)
    since = timezone.now() - timedelta(hours=settings.APPROVAL_ADJUSTMENT_WINDOW_HOURS)
    return wallet_selectors.account_adjustments_total(account_id=account_id, since=since)


def _adjustment_reaches_threshold(arguments: dict) -> bool:
    """The adjustment takes the window's absolute total to the threshold or beyond: split into amounts
    below it, the later ones need a second person all the same. Read under the account's lock."""
    amount = _amount(arguments)  # a malformed amount goes on to the service, which names the field
    if amount is None:
        return False
    return _window_total(arguments["external_id"]) + abs(amount) >= settings.APPROVAL_ADJUSTMENT_THRESHOLD


def _adjustment_changes(arguments: dict) -> dict:
    account = Account.objects.get(external_id=arguments["external_id"])
    amount = _amount(arguments)
    window = _window_total(account.external_id)
    return {"account": account.external_id, "amount": str(amount), "currency": account.currency,
            "balance": {"before": amount_text(account.balance, account.currency),
                        "after": amount_text(account.balance + amount, account.currency)},
            # The absolute total adjusted over the window (APPROVAL_ADJUSTMENT_WINDOW_HOURS), with this one.
            "adjusted_in_window": {"before": amount_text(window, account.currency),
                                   "after": amount_text(window + abs(amount), account.currency)}}


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
    # An adjustment is a credit or a debit, not a balance to set: it applies to the balance of the
    # moment of approval (which the ledger checks again), not only to the one it was proposed against.
    lock=lambda arguments: wallet_locks.lock_accounts_by_external_id([arguments["external_id"]]),
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
    # The round's status is read past its gate and row lock: a deal committing meanwhile is seen.
    lock=lambda arguments: game_locks.lock_round(arguments["round_id"]),
)


KINDS = {kind.action: kind for kind in (GAME_UPDATE, GAME_ACTIVATE, GAME_CREATE, ACCOUNT_ADJUST, ROUND_VOID)}


def kinds_enabled(service) -> list:
    """The kinds of ``service`` that the settings turn on (those of one service lock the same rows)."""
    return [kind for kind in KINDS.values() if kind.service is service and kind.enabled]


def kind_needing_approval(service, arguments: dict) -> ActionKind | None:
    """The first kind of ``service`` that the settings turn on and this request needs, else None.
    Called under the lock of what it reads (``lock_for``)."""
    return next((kind for kind in kinds_enabled(service) if kind.needs_approval(arguments)), None)


def lock_for(service, arguments: dict) -> None:
    """Take the row locks of what deciding on this request reads, when any kind of it is turned on."""
    kinds = kinds_enabled(service)
    if kinds:
        kinds[0].lock(arguments)
