"""Why a bet won, pushed or lost, as the pages, exports and webhooks show it: its bet type's event on
the dealt round, and what the paytable it settles on (``bet_paytable``) makes of that event.

Nothing here knows a bet type: the registry's rule names the event and ``settlement_of`` settles it,
as settlement does, so a new bet type in the registry is shown with no change here.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from .bets import bet_kind, round_events
from .payout import LOSE, PUSH
from .paytables import bet_paytable, settlement_of
from .rules import result_from_labels


def event_label(event: str) -> str:
    """An event as people read it: "WIN_BY_5" → "Win by 5", "NATURAL_TIE" → "Natural tie"."""
    return event.replace("_", " ").capitalize()


def multiplier_text(multiplier: Decimal) -> str:
    """A multiplier without the column's trailing zeros: "× 2", "× 1.95", "× 100"."""
    return f"× {Decimal(multiplier).normalize():f}"


@dataclass(frozen=True)
class BetOutcome:
    """A bet's event on its round and its settlement there: WIN, PUSH or LOSE, at ``multiplier`` of
    the stake returned (0 when lost, 1 on a push), by ``paytable``, the one it settles on."""

    bet_type: str
    event: str
    settlement: str
    multiplier: Decimal
    paytable: Mapping

    @property
    def event_label(self) -> str:
        return event_label(self.event)

    @property
    def paid(self) -> str:
        """What the paytable pays on the event: "× 12", "push" or "lost"."""
        if self.settlement == LOSE:
            return "lost"
        if self.settlement == PUSH:
            return "push"
        return multiplier_text(self.multiplier)

    @property
    def paytable_text(self) -> str:
        """The paytable in one line: "Natural win × 2 · Win by 9 × 31 · Natural tie push · otherwise lost"."""
        return " · ".join([*(f"{label} {pays}" for _event, label, pays in paytable_lines(self.bet_type, self.paytable)),
                           "otherwise lost"])


def paytable_lines(bet_type: str, paytable) -> list:
    """(event, its label, "× 12" or "push") for each event of a paytable, in the order of the bet
    type's events (a paytable read back from JSONB has its keys in the database's order)."""
    kind = bet_kind(bet_type)
    return [(event, event_label(event), "push" if event in kind.push_events else multiplier_text(paytable[event]))
            for event in kind.events if event in paytable]


def dealt_event(bet_type: str, cards, player_cards, banker_cards) -> str | None:
    """A bet type's event on a round dealt as stored (its cards' labels); None before the deal."""
    if not cards:
        return None
    return round_events(result_from_labels(cards, player_cards, banker_cards))[bet_type]


def bet_outcome(bet_type: str, multiplier: Decimal, paytable, cards, player_cards,
                banker_cards) -> BetOutcome | None:
    """Why a bet (its type, its multiplier and its own paytable, None for a main bet) won, pushed or
    lost on a round dealt as stored; None before the deal."""
    event = dealt_event(bet_type, cards, player_cards, banker_cards)
    if event is None:
        return None
    table = bet_paytable(bet_type, Decimal(multiplier), paytable)
    settled, paid = settlement_of(bet_type, table, event)
    return BetOutcome(bet_type, event, settled, paid, table)
