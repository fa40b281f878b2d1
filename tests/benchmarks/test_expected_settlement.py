"""The benchmarks' SQL of the expected settlement agrees exactly with the engine, on this database.

Each value goes through a CAST to its model column's type on the database under test, so the
expressions see what they see in the benchmarks: an exact numeric.
"""

from decimal import Decimal

import pytest
from django.db import connection
from hypothesis import example, given
from hypothesis import strategies as st

from benchmarks.expected import expected_payout_sql, expected_status_sql
from games.choices import STATUS_BY_SETTLEMENT_KIND
from games.engine import bet_return, settlement_kind
from games.engine.payout import MAX_MULTIPLIER, MIN_MULTIPLIER, MINOR_UNIT, MULTIPLIER_DECIMAL_PLACES, SETTLEMENT
from games.models import Bet, Round
from wallet.validators import MAX_STAKE

pytestmark = pytest.mark.django_db

EVERY_BET_TYPE_AND_OUTCOME = [(bet_type, outcome) for bet_type, row in SETTLEMENT.items() for outcome in row]
CENT = MINOR_UNIT  # the benchmarks' games play in a currency of two places (USD)
# The largest stake any game may take (its payout at the largest multiplier fits a money column).
LARGEST_STAKE = MAX_STAKE

stakes = st.decimals(min_value=CENT, max_value=LARGEST_STAKE, places=-CENT.as_tuple().exponent)
multipliers = st.decimals(min_value=MIN_MULTIPLIER, max_value=MAX_MULTIPLIER, places=MULTIPLIER_DECIMAL_PLACES)


def settle_in_sql(bet_type, outcome, stake, multiplier) -> tuple:
    """(status, payout) of one bet, computed by the expressions over the aliases b and r they default to."""
    def column(model, name):
        return model._meta.get_field(name).db_type(connection)

    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT {expected_status_sql()}, {expected_payout_sql()}
                FROM (SELECT CAST(%s AS {column(Bet, "bet_type")}) AS bet_type,
                             CAST(%s AS {column(Bet, "stake")}) AS stake,
                             CAST(%s AS {column(Bet, "multiplier")}) AS multiplier) AS b,
                     (SELECT CAST(%s AS {column(Round, "outcome")}) AS outcome) AS r""",
            [bet_type, stake, multiplier, outcome],
        )
        return cursor.fetchone()


def as_decimal(value) -> Decimal:
    """A number as the database returned it: str() of a float is the shortest text that reads back
    as the same float, so a float equal to the nearest float of a payout reads as that payout."""
    return value if isinstance(value, Decimal) else Decimal(str(value))


@pytest.mark.parametrize(("bet_type", "outcome"), EVERY_BET_TYPE_AND_OUTCOME)
@given(stake=stakes, multiplier=multipliers)
@example(stake=Decimal("1.15"), multiplier=Decimal("2"))  # 2.2999… in floating point: must pay 2.30
@example(stake=Decimal("10.01"), multiplier=Decimal("1.95"))  # 19.5195 rounds down to 19.51
@example(stake=Decimal("0.01"), multiplier=MIN_MULTIPLIER)
@example(stake=LARGEST_STAKE, multiplier=MAX_MULTIPLIER)
@example(stake=LARGEST_STAKE, multiplier=Decimal("999.9999"))
def test_agrees_with_bet_return(bet_type, outcome, stake, multiplier):
    status, payout = settle_in_sql(bet_type, outcome, stake, multiplier)
    assert status == STATUS_BY_SETTLEMENT_KIND[settlement_kind(bet_type, outcome)]
    assert as_decimal(payout) == bet_return(bet_type, stake, outcome, multiplier)


def test_a_round_without_an_outcome_has_no_expected_settlement():
    """NULL, not LOST or 0: a check comparing with it cannot pass for a bet of an undealt round."""
    assert settle_in_sql("PLAYER", None, Decimal("10.00"), Decimal("2.0")) == (None, None)
