"""bench_settlement --prefill: before each measurement the last one's settlement of the data set is
undone in place, the history untouched; a write the undo misses stops the run."""

import pytest
from django.core.management import CommandError
from django.db import ProgrammingError, connection

from benchmarks.settlement import data, history
from benchmarks.settlement.check import verify
from games.models import BetKey
from settlement.services import settlement_sweep

pytestmark = pytest.mark.owner  # the builds truncate, VACUUM and make the events table, as the tables' owner


def history_rows() -> dict:
    """The history's rows, every column: {table: (count, digest)} of its accounts, rounds, bets, bet
    keys, ledger entries and effects."""
    accounts = f"SELECT id FROM {data.T_ACCOUNT} WHERE starts_with(external_id, '{history.ACCOUNT_PREFIX}')"
    bets = f"SELECT id FROM {data.T_BET} WHERE account_id IN ({accounts})"
    of_the_history = {
        data.T_ACCOUNT: f"id IN ({accounts})",
        data.T_ROUND: f"game_id = (SELECT id FROM {data.T_GAME} WHERE slug = 'bench-history')",
        data.T_BET: f"id IN ({bets})",
        BetKey._meta.db_table: f"bet_id IN ({bets})",
        data.T_LEDGER: f"account_id IN ({accounts})",
        data.T_EFFECT: f"bet_id IN ({bets})",
    }
    rows = {}
    with connection.cursor() as cursor:
        for table, where in of_the_history.items():
            cursor.execute(f"SELECT count(*), md5(string_agg(md5(t::text), '' ORDER BY t::text)) FROM {table} AS t "
                           f"WHERE {where}")
            rows[table] = cursor.fetchone()
    return rows


def append_only_triggers() -> dict:
    """{table: enabled} of every append-only trigger, the partitions' included."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgrelid::regclass::text, tgenabled FROM pg_trigger WHERE tgname LIKE '%append_only'")
        return dict(cursor.fetchall())


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
    assert before[data.T_BET][0] == 3000 and before[data.T_EFFECT][0] == 3000 * 2
    assert before[data.T_LEDGER][0] == 3000 * 2 + history.ACCOUNTS  # a deposit per account

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
        triggers = append_only_triggers()
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


def test_an_undo_that_fails_leaves_the_append_only_triggers_on(built_beside_history, monkeypatch):
    _dataset, built = built_beside_history
    settlement_sweep()
    monkeypatch.setattr(history, "T_ROUND", "no_such_table")  # fails after the triggers are lifted
    with pytest.raises(ProgrammingError):
        history.fresh(built)
    triggers = append_only_triggers()
    assert data.T_EFFECT in triggers and set(triggers.values()) == {"O"}, triggers
    with connection.cursor() as cursor:  # and the deletes before it rolled back with it
        cursor.execute(f"SELECT count(*) FROM {data.T_LEDGER} WHERE kind = 'PAYOUT' AND {data.OF_THE_DATA_SET}")
        assert cursor.fetchone()[0] > 0
