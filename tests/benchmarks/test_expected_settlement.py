"""The benchmarks' SQL of the expected settlement agrees exactly with the engine, on this database:
a main bet's with ``bet_return``, a side bet's (on its round's event) with ``bet_settlement``.

Each value goes through a CAST to its model column's type on the database under test, so the
expressions see what they see in the benchmarks: an exact numeric.
"""

import json
from decimal import Decimal

import pytest
from django.db import connection
from hypothesis import example, given, settings
from hypothesis import strategies as st

from benchmarks.expected import expected_payout_sql, expected_status_sql
from games.choices import STATUS_BY_SETTLEMENT_KIND
from games.engine import (
    REGISTRY,
    SIDE_BET_TYPES,
    Outcome,
    bet_return,
    bet_settlement,
    headline_multiplier,
    make_paytable,
    paytable_as_json,
    settlement_kind,
)
from games.engine.payout import MAX_MULTIPLIER, MIN_MULTIPLIER, MINOR_UNIT, MULTIPLIER_DECIMAL_PLACES, SETTLEMENT
from games.models import Bet, Round
from wallet.validators import MAX_STAKE

pytestmark = pytest.mark.django_db

EVERY_BET_TYPE_AND_OUTCOME = [(bet_type, outcome) for bet_type, row in SETTLEMENT.items() for outcome in row]
EVERY_SIDE_BET_AND_EVENT = [(name, event) for name in SIDE_BET_TYPES for event in REGISTRY[name].events]
CENT = MINOR_UNIT  # the benchmarks' games play in a currency of two places (USD)
# The largest stake any game may take (its payout at the largest multiplier fits a money column).
LARGEST_STAKE = MAX_STAKE

stakes = st.decimals(min_value=CENT, max_value=LARGEST_STAKE, places=-CENT.as_tuple().exponent)
multipliers = st.decimals(min_value=MIN_MULTIPLIER, max_value=MAX_MULTIPLIER, places=MULTIPLIER_DECIMAL_PLACES)


@st.composite
def paytables(draw, name: str):
    """A valid paytable of side bet ``name``: some of its paying events at any multiplier."""
    kind = REGISTRY[name]
    paying = [event for event in kind.events if event not in kind.push_events]
    listed = draw(st.lists(st.sampled_from(paying), min_size=1, unique=True))
    return make_paytable(kind, {event: draw(multipliers) for event in listed})


def settle_in_sql(bet_type, outcome, stake, multiplier, *, paytable=None, event=None, with_event=False) -> tuple:
    """(status, payout) of one bet, computed by the expressions over the aliases b and r they default
    to; ``with_event``, over e too, the round's event for the bet's type (as the settlement benchmark
    joins it), and the bet's ``paytable`` as it is stored."""
    def column(model, name):
        return model._meta.get_field(name).db_type(connection)

    stored = None if paytable is None else json.dumps(paytable_as_json(paytable))
    event_sql = {"event": "e.event"} if with_event else {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT {expected_status_sql(**event_sql)}, {expected_payout_sql(**event_sql)}
                FROM (SELECT CAST(%s AS {column(Bet, "bet_type")}) AS bet_type,
                             CAST(%s AS {column(Bet, "stake")}) AS stake,
                             CAST(%s AS {column(Bet, "multiplier")}) AS multiplier,
                             CAST(%s AS {column(Bet, "paytable")}) AS paytable) AS b,
                     (SELECT CAST(%s AS {column(Round, "outcome")}) AS outcome) AS r,
                     (SELECT CAST(%s AS text) AS event) AS e""",
            [bet_type, stake, multiplier, stored, outcome, event],
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
    """Without the round's events (the pages benchmark) and with them (the settlement benchmark's
    expressions, which pay side bets too): a main bet settles on its round's outcome alone."""
    for with_event in (False, True):
        status, payout = settle_in_sql(bet_type, outcome, stake, multiplier, event=outcome, with_event=with_event)
        assert status == STATUS_BY_SETTLEMENT_KIND[settlement_kind(bet_type, outcome)]
        assert as_decimal(payout) == bet_return(bet_type, stake, outcome, multiplier)


@pytest.mark.parametrize(("bet_type", "event"), EVERY_SIDE_BET_AND_EVENT)
@given(data=st.data(), stake=stakes, outcome=st.sampled_from(Outcome.ALL))
@settings(max_examples=40)  # for each of 35 (side bet, event) pairs: the suite stays quick
@example(data=None, stake=Decimal("10.01"), outcome="BANKER")  # None: the bet type's default paytable
@example(data=None, stake=LARGEST_STAKE, outcome="TIE")
def test_a_side_bet_agrees_with_bet_settlement(bet_type, event, data, stake, outcome):
    """On its own paytable, as stored with it: a push event returns the stake, a listed event stake ×
    its multiplier rounded down, any other event nothing; whatever the round's outcome."""
    paytable = make_paytable(bet_type, REGISTRY[bet_type].default_paytable) if data is None else \
        data.draw(paytables(bet_type))
    stored = paytable_as_json(paytable)
    settled, returned = bet_settlement(bet_type, stake, headline_multiplier(paytable), stored, event)
    status, payout = settle_in_sql(bet_type, outcome, stake, headline_multiplier(paytable), paytable=paytable,
                                   event=event, with_event=True)
    assert status == STATUS_BY_SETTLEMENT_KIND[settled]
    assert as_decimal(payout) == returned


def test_a_round_without_an_outcome_has_no_expected_settlement():
    """NULL, not LOST or 0: a check comparing with it cannot pass for a bet of an undealt round."""
    assert settle_in_sql("PLAYER", None, Decimal("10.00"), Decimal("2.0")) == (None, None)


def test_a_side_bet_of_a_round_without_its_events_has_no_expected_settlement():
    paytable = make_paytable("PLAYER_PAIR", {"PAIR": "12"})
    assert settle_in_sql("PLAYER_PAIR", "PLAYER", Decimal("10.00"), Decimal("12"), paytable=paytable, event=None,
                         with_event=True) == (None, None)
    # Nor does a side bet settle when only main bets are expected (no events given).
    assert settle_in_sql("PLAYER_PAIR", "PLAYER", Decimal("10.00"), Decimal("12"), paytable=paytable) == (None, None)
