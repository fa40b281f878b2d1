"""Settlement of one bet: the amount returned to the bettor, stake included (baccarat-rules.md)."""

import re
from decimal import ROUND_DOWN, Decimal
from typing import NamedTuple

from .rules import Outcome


class BetType:
    PLAYER = "PLAYER"
    BANKER = "BANKER"
    TIE = "TIE"

    ALL = (PLAYER, BANKER, TIE)


WIN = "WIN"    # stake × the bet type's multiplier
PUSH = "PUSH"  # the stake comes back
LOSE = "LOSE"  # nothing comes back

# What each bet does for each outcome: the settlement table of the specification, with the tie push.
SETTLEMENT = {
    #  bet type          outcome PLAYER   outcome BANKER   outcome TIE
    BetType.PLAYER: {Outcome.PLAYER: WIN, Outcome.BANKER: LOSE, Outcome.TIE: PUSH},
    BetType.BANKER: {Outcome.PLAYER: LOSE, Outcome.BANKER: WIN, Outcome.TIE: PUSH},
    BetType.TIE: {Outcome.PLAYER: LOSE, Outcome.BANKER: LOSE, Outcome.TIE: WIN},
}

MINOR_UNIT = Decimal("0.01")  # the unit of a two-place currency; settlement passes each game's (core.currencies)
MIN_MULTIPLIER = Decimal("1.0")
MAX_MULTIPLIER = Decimal("1000")
MULTIPLIER_DECIMAL_PLACES = 4
# A multiplier given as text is read as written: ASCII digits and a point, no exponent, underscore or
# other digits (Decimal would read "1e3", "1_000" and "١٢"). A number the JSON parser read is a Decimal.
MULTIPLIER_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")
MULTIPLIER_TEXT_PROBLEM = "must be a decimal number written in ASCII digits, such as 12 or 1.5"


class Multipliers(NamedTuple):
    player: Decimal = Decimal("2.0")
    banker: Decimal = Decimal("1.95")
    tie: Decimal = Decimal("9.0")

    def for_bet(self, bet_type: str) -> Decimal:
        return {BetType.PLAYER: self.player, BetType.BANKER: self.banker, BetType.TIE: self.tie}[bet_type]


DEFAULT_MULTIPLIERS = Multipliers()


def multiplier_problem(value) -> str | None:
    """Why ``value`` cannot be a multiplier, or None when it can (≥ 1.0, ≤ 1000, ≤ 4 places)."""
    if isinstance(value, bool) or not isinstance(value, (Decimal, int, str)):
        return "must be a decimal number"
    if isinstance(value, str) and not MULTIPLIER_TEXT.fullmatch(value.strip()):
        return MULTIPLIER_TEXT_PROBLEM
    try:
        value = Decimal(value)
    except ArithmeticError:
        return "must be a decimal number"
    if not value.is_finite():
        return "must be a finite number"
    if value < MIN_MULTIPLIER:
        return f"must be at least {MIN_MULTIPLIER}"
    if value > MAX_MULTIPLIER:
        return f"must be at most {MAX_MULTIPLIER}"
    if value.as_tuple().exponent < -MULTIPLIER_DECIMAL_PLACES:
        return f"must have at most {MULTIPLIER_DECIMAL_PLACES} decimal places"
    return None


def settlement_kind(bet_type: str, outcome: str) -> str:
    """WIN, PUSH or LOSE for a bet type and an outcome."""
    return SETTLEMENT[bet_type][outcome]


def bet_return(bet_type: str, stake: Decimal, outcome: str, multiplier: Decimal,
               minor_unit: Decimal = MINOR_UNIT) -> Decimal:
    """The amount returned for a bet settled at its own ``multiplier``, rounded down to ``minor_unit``,
    the unit of the game's currency (JPY 1, USD 0.01, KWD 0.001)."""
    kind = SETTLEMENT[bet_type][outcome]
    if kind == LOSE:
        return Decimal(0).quantize(minor_unit)
    if kind == PUSH:
        return stake.quantize(minor_unit, rounding=ROUND_DOWN)
    return (stake * multiplier).quantize(minor_unit, rounding=ROUND_DOWN)
