"""Paytables: what each event of a bet type returns, per unit staked, stake included.

A paytable maps events to multipliers. An event it lists pays stake × its multiplier (at least
1.0, at most 1000, four decimal places at most: ``multiplier_problem``); a push event of the bet
type returns the stake (its multiplier is exactly 1.0, listed or not); any other event loses (0).
The three main bets' paytables are the game's three multipliers with the tie push
(``main_paytables``), so one settlement path serves every bet type.
"""

from decimal import ROUND_DOWN, Decimal
from fractions import Fraction
from functools import lru_cache
from types import MappingProxyType

from .bets import REGISTRY, SIDE_BET_TYPES, BetKind, bet_kind
from .payout import LOSE, MINOR_UNIT, PUSH, WIN, Multipliers, multiplier_problem

ONE = Decimal(1)
ZERO = Decimal(0)


class PaytableError(ValueError):
    """A paytable that cannot be used; ``field`` names the event (or ``paytable`` for its shape)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def paytable_problems(kind: BetKind, paytable) -> dict:
    """Why ``paytable`` cannot be one of ``kind``: {event or "paytable": reason}; empty when it can.

    Multipliers may be given as Decimal, int or decimal text (the form JSON and forms carry)."""
    if not hasattr(paytable, "items"):
        return {"paytable": "must map events to multipliers"}
    problems = {}
    for event, multiplier in paytable.items():
        if event not in kind.events:
            problems[str(event)] = f"is not an event of {kind.name} (its events: {', '.join(kind.events)})"
            continue
        problem = multiplier_problem(multiplier)
        if problem:
            problems[event] = problem
        elif event in kind.push_events and Decimal(multiplier) != ONE:
            problems[event] = "is a push: its multiplier must be exactly 1.0"
    if not problems and all(event in kind.push_events for event in paytable):
        problems["paytable"] = "must pay on at least one event"
    return problems


def make_paytable(kind: BetKind | str, paytable) -> MappingProxyType:
    """``paytable`` checked and normalised: Decimal multipliers, every push event at 1.0, in the
    order of the bet type's events. PaytableError names the first problem."""
    kind = bet_kind(kind) if isinstance(kind, str) else kind
    problems = paytable_problems(kind, paytable)
    if problems:
        field, message = next(iter(problems.items()))
        raise PaytableError(field, message)
    given = {event: Decimal(multiplier) for event, multiplier in paytable.items()}
    return MappingProxyType({
        event: ONE if event in kind.push_events else given[event]
        for event in kind.events if event in given or event in kind.push_events
    })


def default_paytables() -> dict:
    """Every registered bet type's default paytable, by name."""
    return {name: make_paytable(kind, kind.default_paytable) for name, kind in REGISTRY.items()}


def main_paytables(multipliers: Multipliers) -> dict:
    """The paytables of the three main bets at a game's multipliers, with the tie push."""
    return {
        "PLAYER": make_paytable("PLAYER", {"PLAYER": multipliers.player}),
        "BANKER": make_paytable("BANKER", {"BANKER": multipliers.banker}),
        "TIE": make_paytable("TIE", {"TIE": multipliers.tie}),
    }


def paytable_as_json(paytable) -> dict:
    """{event: "multiplier"}: plain decimal text ("1E+1" is written "10"), so that no binary float
    ever carries a multiplier and the database's check of the text reads it."""
    return {event: format(Decimal(multiplier), "f") for event, multiplier in paytable.items()}


def settlement_of(kind: BetKind | str, paytable, event: str) -> tuple:
    """(WIN, PUSH or LOSE, the multiplier of the stake returned) for ``event`` under ``paytable``."""
    kind = bet_kind(kind) if isinstance(kind, str) else kind
    if event not in kind.events:
        raise ValueError(f"{event!r} is not an event of {kind.name}")
    if event in kind.push_events:
        return PUSH, ONE
    multiplier = paytable.get(event)
    if multiplier is None:
        return LOSE, ZERO
    return WIN, Decimal(multiplier)


def side_bets_problems(side_bets) -> dict:
    """Why ``side_bets`` ({side bet type: paytable}) cannot be a game's side bets: {"TYPE" or
    "TYPE.EVENT": reason}; empty when it can (an empty mapping offers none)."""
    if not isinstance(side_bets, dict):
        return {"side_bets": "must map side bet types to paytables"}
    problems = {}
    for name, paytable in side_bets.items():
        if name not in SIDE_BET_TYPES:
            problems[str(name)] = f"is not a side bet (the side bets: {', '.join(SIDE_BET_TYPES)})"
            continue
        for event, problem in paytable_problems(REGISTRY[name], paytable).items():
            problems[name if event == "paytable" else f"{name}.{event}"] = problem
    return problems


def side_bets_as_json(side_bets) -> dict:
    """Side bets checked (PaytableError names the first problem) and normalised for storage: in the
    registry's order, every paytable by ``make_paytable`` as decimal text."""
    problems = side_bets_problems(side_bets)
    if problems:
        field, message = next(iter(problems.items()))
        raise PaytableError(field, message)
    return {name: paytable_as_json(make_paytable(name, side_bets[name])) for name in SIDE_BET_TYPES
            if name in side_bets}


def headline_multiplier(paytable) -> Decimal:
    """A paytable's highest multiplier: what a side bet pays at most, kept as the bet's multiplier."""
    return max(Decimal(multiplier) for multiplier in paytable.values())


@lru_cache(maxsize=4096)
def _bet_paytable(bet_type: str, multiplier: Decimal, paytable_items: tuple | None) -> MappingProxyType:
    kind = bet_kind(bet_type)
    if paytable_items is not None:
        return MappingProxyType({event: Decimal(value) for event, value in paytable_items})
    return MappingProxyType({event: ONE if event in kind.push_events else Decimal(multiplier)
                             for event in kind.default_paytable})


def bet_paytable(bet_type: str, multiplier: Decimal, paytable=None) -> MappingProxyType:
    """The paytable a bet settles on: a side bet's own, kept with it when it was accepted; a main
    bet's is its bet type's default paytable with the paying events at the bet's own multiplier."""
    return _bet_paytable(bet_type, multiplier, None if paytable is None else tuple(paytable.items()))


def bet_settlement(bet_type: str, stake: Decimal, multiplier: Decimal, paytable, event: str,
                   minor_unit: Decimal = MINOR_UNIT) -> tuple:
    """(WIN, PUSH or LOSE, the amount returned) for one bet on a round whose event for its type is
    ``event``: every bet type's settlement, main or side, by its paytable (``bet_paytable``)."""
    settled, paid = settlement_of(bet_type, bet_paytable(bet_type, multiplier, paytable), event)
    return settled, _returned(settled, paid, stake, minor_unit)


def paytable_return(kind: BetKind | str, paytable, event: str, stake: Decimal,
                    minor_unit: Decimal = MINOR_UNIT) -> Decimal:
    """The amount returned for a bet on ``event``, rounded down to the minor unit (as bet_return)."""
    return _returned(*settlement_of(kind, paytable, event), stake, minor_unit)


def _returned(settled: str, multiplier: Decimal, stake: Decimal, minor_unit: Decimal) -> Decimal:
    if settled == LOSE:
        return ZERO.quantize(minor_unit)
    return (stake * multiplier).quantize(minor_unit, rounding=ROUND_DOWN)


def expected_return(kind: BetKind | str, paytable, event_probabilities) -> Fraction:
    """The exact return to player: Σ probability × multiplier over the events (stake included)."""
    total = Fraction(0)
    for event, probability in event_probabilities.items():
        _settled, multiplier = settlement_of(kind, paytable, event)
        total += Fraction(probability) * Fraction(multiplier)
    return total
