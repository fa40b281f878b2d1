"""bench_settlement --prefill: before each measurement the last one's settlement of the data set is
undone in place, the history untouched; a write the undo misses stops the run."""

import pytest
from django.core.management import CommandError
from django.db import connection

from benchmarks.settlement import data, history
from benchmarks.settlement.check import verify
from settlement.services import settlement_sweep

pytestmark = pytest.mark.owner  # the builds truncate, VACUUM and make the events table, as the tables' owner


@pytest.fixture
def events_table():
    """The benchmark's events table, which the test database's flush does not know of, dropped after."""
    yield data.T_EVENTS
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {data.T_EVENTS}")


def history_rows() -> tuple:
    """The history's bets and ledger entries, every column: (count, digest) of each."""
    of_history = f"account_id IN (SELECT id FROM {data.T_ACCOUNT} WHERE starts_with(external_id, 'history-'))"
    with connection.cursor() as cursor:
        cursor.execute(f"""SELECT (SELECT count(*) FROM {data.T_BET} WHERE {of_history}),
                                  (SELECT md5(string_agg(b::text, '' ORDER BY id)) FROM {data.T_BET} AS b
                                   WHERE {of_history}),
                                  (SELECT count(*) FROM {data.T_LEDGER} WHERE {of_history}),
                                  (SELECT md5(string_agg(l::text, '' ORDER BY id)) FROM {data.T_LEDGER} AS l
                                   WHERE {of_history})""")
        return cursor.fetchone()


@pytest.fixture
def built_beside_history(postgres, events_table):
    """A data set (half of it side bets) and 3,000 bets of history beside it; the data set's digest."""
    shape = data.Shape(bets_per_round=20, accounts=30, seed=7, client_id=data.bench_client(), side_bets=0.5)
    dataset = data.build(2000, shape, say=lambda text: None)
    built = data.rows_digest()
    history.write(3000, say=lambda text: None)
    assert data.rows_digest() == built  # the history writes none of the data set's rows
    return dataset, built


def test_fresh_undoes_the_products_settlement_and_keeps_the_history(built_beside_history):
    dataset, built = built_beside_history
    before = history_rows()
    assert before[0] == 3000 and before[2] == 3000 * 2 + history.ACCOUNTS  # a deposit per account

    for _ in range(2):  # settled by the product's sweep, then undone: twice, the same each time
        settlement_sweep()
        assert verify(expect_all=True, data=dataset) == []
        assert data.rows_digest() != built

        history.fresh(built)
        assert data.rows_digest() == built
        assert verify(expect_all=False, data=dataset) == []
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {data.T_ROUND} WHERE status = 'DEALT'")
            assert cursor.fetchone()[0] == dataset.rounds
            cursor.execute(f"SELECT count(*) FROM {data.T_BATCH}")
            assert cursor.fetchone()[0] == 0
            # The append-only triggers the undo lifted are on again, the partitions' included.
            cursor.execute("SELECT tgrelid::regclass::text, tgenabled FROM pg_trigger "
                           "WHERE tgname LIKE '%%append_only'")
            triggers = dict(cursor.fetchall())
            assert {data.T_EFFECT, data.T_LEDGER, f"{data.T_LEDGER}_legacy"} <= set(triggers)
            assert set(triggers.values()) == {"O"}, triggers
        assert history_rows() == before


def test_a_write_the_undo_misses_stops_the_run(built_beside_history):
    _dataset, built = built_beside_history
    settlement_sweep()
    with connection.cursor() as cursor:  # a settlement that also changed a column the undo leaves alone
        cursor.execute(f"UPDATE {data.T_BET} SET idempotency_key = idempotency_key || '-x' "
                       f"WHERE id = (SELECT min(id) FROM {data.T_BET} WHERE {data.OF_THE_DATA_SET})")
    with pytest.raises(CommandError, match="differ from the build's after its settlement was undone"):
        history.fresh(built)
