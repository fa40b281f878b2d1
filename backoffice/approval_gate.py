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
