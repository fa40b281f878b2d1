"""bench_pages: never touches the configured database."""

import pytest

from benchmarks.pages.database import bench_database_name
from benchmarks.pages.report import percentile


def test_its_own_database():
    assert bench_database_name("baccarat") == "baccarat_pages_bench"
    assert bench_database_name("baccarat_pages_bench") == "baccarat_pages_bench"


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert percentile(values, 0.5) == 50
    assert percentile(values, 0.95) == 95
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([3, 1, 2], 0.5) == 2
    with pytest.raises(ValueError):
        percentile([], 0.5)


def _foreign_keys(table: str) -> dict:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("""SELECT conname, pg_get_constraintdef(oid), convalidated FROM pg_constraint
                          WHERE conrelid = %s::regclass AND contype = 'f' AND conparentid = 0""", [table])
        return {name: (definition, validated) for name, definition, validated in cursor.fetchall()}


@pytest.mark.django_db(transaction=True)
def test_a_bulk_loads_foreign_keys_are_off_during_it_and_checked_after():
    from benchmarks.pages.bets import foreign_keys_checked_after
    from tests import app_role

    with app_role.as_owner():
        before = _foreign_keys("settlement_ledgerentry")
        assert len(before) == 2  # to the accounts and to the bets
        with foreign_keys_checked_after("settlement_ledgerentry"):
            assert _foreign_keys("settlement_ledgerentry") == {}
        assert _foreign_keys("settlement_ledgerentry") == before  # the same keys, validated again
        assert all(validated for _definition, validated in before.values())
