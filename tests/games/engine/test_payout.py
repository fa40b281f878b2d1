"""Settlement of one bet (baccarat-rules.md, "Settlement of one bet"): exact decimals, rounded down."""

from decimal import ROUND_DOWN, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.engine import (
    DEFAULT_MULTIPLIERS,
    BetType,
    Multipliers,
    Outcome,
    bet_return,
    multiplier_problem,
    settlement_kind,
)

HUNDRED = Decimal("100.00")

# The settlement table with the default multipliers, 100.00 staked.
SETTLEMENT_TABLE = [
    (BetType.PLAYER, Outcome.PLAYER, "200.00", "WIN"),
    (BetType.PLAYER, Outcome.BANKER, "0.00", "LOSE"),
    (BetType.PLAYER, Outcome.TIE, "100.00", "PUSH"),
    (BetType.BANKER, Outcome.PLAYER, "0.00", "LOSE"),
    (BetType.BANKER, Outcome.BANKER, "195.00", "WIN"),
    (BetType.BANKER, Outcome.TIE, "100.00", "PUSH"),
    (BetType.TIE, Outcome.PLAYER, "0.00", "LOSE"),
    (BetType.TIE, Outcome.BANKER, "0.00", "LOSE"),
    (BetType.TIE, Outcome.TIE, "900.00", "WIN"),
]


@pytest.mark.parametrize(("bet_type", "outcome", "returned", "kind"), SETTLEMENT_TABLE,
                         ids=[f"{b}-bet-{o}-outcome" for b, o, _, _ in SETTLEMENT_TABLE])
def test_settlement_table_cell(bet_type, outcome, returned, kind):
    amount = bet_return(bet_type, HUNDRED, outcome, DEFAULT_MULTIPLIERS.for_bet(bet_type))
    assert amount == Decimal(returned)
    assert amount.as_tuple().exponent == -2  # always in cents
    assert settlement_kind(bet_type, outcome) == kind


def test_default_multipliers():
    assert Multipliers(Decimal("2.0"), Decimal("1.95"), Decimal("9.0")) == DEFAULT_MULTIPLIERS
    assert all(isinstance(m, Decimal) for m in DEFAULT_MULTIPLIERS)


def test_rounding_example_banker_10_01_at_1_95_returns_19_51():
    # 10.01 × 1.95 = 19.5195: rounded down to the cent, not to nearest.
    assert bet_return(BetType.BANKER, Decimal("10.01"), Outcome.BANKER, DEFAULT_MULTIPLIERS.banker) == Decimal("19.51")


@pytest.mark.parametrize("bet_type", [BetType.PLAYER, BetType.BANKER])
@pytest.mark.parametrize("stake", ["100.00", "0.01", "12.34", "999999.99"])
def test_tie_pushes_player_and_banker_bets(bet_type, stake):
    assert bet_return(bet_type, Decimal(stake), Outcome.TIE, DEFAULT_MULTIPLIERS.for_bet(bet_type)) == Decimal(stake)


def test_tie_bet_on_a_tie_pays_the_tie_multiplier():
    multipliers = Multipliers(Decimal("2.0"), Decimal("1.95"), Decimal("8.5"))
    assert bet_return(BetType.TIE, Decimal("10.00"), Outcome.TIE, multipliers.for_bet(BetType.TIE)) == Decimal("85.00")


def test_bet_return_uses_the_multiplier_it_is_given():
    # The multiplier in force when the bet was accepted, whatever the game's configuration now is.
    assert bet_return(BetType.BANKER, Decimal("10.00"), Outcome.BANKER, Decimal("1.9")) == Decimal("19.00")
    assert bet_return(BetType.BANKER, Decimal("10.00"), Outcome.TIE, Decimal("1.9")) == Decimal("10.00")
    assert bet_return(BetType.BANKER, Decimal("10.00"), Outcome.PLAYER, Decimal("1.9")) == Decimal("0.00")


@pytest.mark.parametrize(("value", "problem"), [
    ("1.0", None), ("1", None), (Decimal("1.95"), None), (2, None), ("1000", None), ("9.1234", None),
    ("0.99", "at least"), ("0", "at least"), ("-2", "at least"),
    ("1000.0001", "at most 1000"), (Decimal("1e4"), "at most 1000"), (" 12 ", None),
    ("1.00001", "decimal places"),
    (Decimal("NaN"), "finite"), (Decimal("Infinity"), "finite"), (Decimal("-Infinity"), "finite"),
    ("NaN", "ASCII digits"), ("Infinity", "ASCII digits"), ("1e3", "ASCII digits"), ("1_000", "ASCII digits"),
    ("١٢", "ASCII digits"), ("abc", "decimal number"), ("", "decimal number"), (1.5, "decimal number"),
    (True, "decimal number"),
    (None, "decimal number"),
])
def test_multiplier_problem(value, problem):
    found = multiplier_problem(value)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


stakes = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("1000000"), places=2)
multipliers_ = st.decimals(min_value=Decimal("1"), max_value=Decimal("1000"), places=4)


@given(st.sampled_from(BetType.ALL), st.sampled_from(Outcome.ALL), stakes, multipliers_)
def test_payout_is_never_negative_nor_more_than_stake_times_multiplier(bet_type, outcome, stake, multiplier):
    multipliers = Multipliers(multiplier, multiplier, multiplier)
    amount = bet_return(bet_type, stake, outcome, multipliers.for_bet(bet_type))
    assert Decimal(0) <= amount <= stake * multiplier
    assert amount == amount.quantize(Decimal("0.01"))
    kind = settlement_kind(bet_type, outcome)
    expected = {"LOSE": Decimal(0), "PUSH": stake,
                "WIN": (stake * multiplier).quantize(Decimal("0.01"), rounding=ROUND_DOWN)}[kind]
    assert amount == expected
    assert stake * multiplier - amount < Decimal("0.01") or kind != "WIN"
