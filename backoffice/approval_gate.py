"""The four-eyes gate: where API views and admin pages submit an action that may need a second person.

The views of games and wallet sit below the approvals app and cannot import it. They call
``submit(service, **kwargs)`` instead of the service; the approvals app, when it starts, registers
the gate that decides (approvals.services.approval_submit). A request that needs a second person is
validated in full, stored as a pending approval and comes back as ``Held``; any other runs the service
at once, in the transaction that decided so (``Done``). Without a registered gate every request runs
at once.
"""

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from backoffice.formatting import money


@dataclass(frozen=True)
class Held:
    """The request waits for a second person; ``approval`` is the pending approval."""

    approval: Any


@dataclass(frozen=True)
class Done:
    """The service ran; ``result`` is what it returned."""

    result: Any


_gate = None


def register(gate) -> None:
    """``gate(service, **kwargs)`` returns ``Held`` (the pending approval) when the request must wait,
    or ``Done`` once it has run the service itself: deciding and running are one transaction."""
    global _gate
    _gate = gate


def submit(service, **kwargs) -> Held | Done:
    if _gate is not None:
        return _gate(service, **kwargs)
    return Done(service(**kwargs))


def four_eyes_hint(action: str) -> str:
    """The sentence a form shows when its change may wait for a second person (settings.APPROVAL_ACTIONS
    turns ``action`` on; approvals.actions decides case by case), else ""."""
    if action not in settings.APPROVAL_ACTIONS:
        return ""
    if action == "account.adjust":
        return (f" Four eyes: an adjustment that takes this account's adjustments over "
                f"{settings.APPROVAL_ADJUSTMENT_WINDOW_HOURS:g} hours to "
                f"{money(settings.APPROVAL_ADJUSTMENT_THRESHOLD)} or more waits for a second person's approval.")
    if action == "round.void":
        return (" Four eyes: voiding a dealt round waits for a second person's approval; an open round is "
                "voided at once.")
    return (" Four eyes: once the game has taken bets, a change of its payouts, limits or decks, or making it "
            "active, waits for a second person's approval; a rename or a suspension takes effect at once.")
