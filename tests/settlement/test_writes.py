"""The array literals the set-based settlement writes send to PostgreSQL."""

from decimal import Decimal

import pytest

from games.choices import BetStatus
from wallet.writes import array_literal as _array


def test_numbers_and_words_become_one_array_literal():
    assert _array([1, 22, 333]) == "{1,22,333}"
    assert _array(x for x in [7]) == "{7}"
    assert _array([]) == "{}"
    assert _array([Decimal("0.00"), Decimal("19.51"), Decimal("-3.10")]) == "{0.00,19.51,-3.10}"
    assert _array([BetStatus.WON, BetStatus.LOST, BetStatus.PUSH]) == "{WON,LOST,PUSH}"


@pytest.mark.parametrize("values", [
    ["a b"], ["a,b"], [""], ["", "x"], ['"'], ["{}"], ["x\\y"], [None], ["NULL"], ["x", "null"],
])
def test_anything_an_array_literal_would_read_differently_is_refused(values):
    with pytest.raises(ValueError):
        _array(values)


@pytest.mark.services
def test_postgres_reads_back_the_same_values(postgres):
    ids = [1, 2, 9_000_000_000]
    amounts = [Decimal("0.00"), Decimal("19.51"), Decimal("123456789012.34")]
    statuses = [BetStatus.WON, BetStatus.LOST, BetStatus.PUSH]
    with postgres.cursor() as cursor:
        cursor.execute("SELECT %s::bigint[], %s::numeric[], %s::varchar[]",
                       [_array(ids), _array(amounts), _array(statuses)])
        assert cursor.fetchone() == (ids, amounts, ["WON", "LOST", "PUSH"])
