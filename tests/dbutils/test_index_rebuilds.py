"""An index put in another's place on a table in use (dbutils.index_rebuilds): on a partitioned table
of the test's own, each partition's built and attached, the old index gone; a build that stopped is
built again; a writer is not held up while the build waits for one still writing; and the product's
indexes led by a few values ascend on every partition, both ways of their migrations."""

import threading
import time
from datetime import date
from io import StringIO

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection
from psycopg import sql

from dbutils import index_rebuilds
from dbutils import partitions as p
from dbutils.postgresql import urls
from games.models import Bet, Round
from tests import app_role
from wallet.models import LedgerEntry

pytestmark = [pytest.mark.owner, pytest.mark.django_db(transaction=True)]
TABLE, OLD, NEW = "test_rebuild_bets", "test_rebuild_status_desc", "test_rebuild_status_id"
SEPTEMBER = date(2026, 9, 1)
COLUMNS = sql.SQL("(status, id)")


@pytest.fixture
def table():
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {TABLE} (id bigint PRIMARY KEY, status text NOT NULL) PARTITION BY RANGE (id)")
        cursor.execute(f"CREATE TABLE {TABLE}_legacy PARTITION OF {TABLE} FOR VALUES FROM (MINVALUE) "
                       f"TO ({p.month_start_id(SEPTEMBER)})")
        cursor.execute(f"CREATE INDEX {OLD} ON {TABLE} (status, id DESC)")
    p.ensure(TABLE, today=SEPTEMBER, ahead=2)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {TABLE} SELECT {p.month_start_id(SEPTEMBER)} + n, "
                       "(ARRAY['WON', 'LOST'])[1 + n % 2] FROM generate_series(1, 1000) n")
        cursor.execute(f"INSERT INTO {TABLE} VALUES (1, 'WON')")  # one in the legacy partition
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {TABLE} CASCADE")


def other_connection(*, autocommit: bool = False) -> psycopg.Connection:
    return psycopg.connect(urls.to_url(app_role.owner_settings(), name=connection.settings_dict["NAME"]),
                           autocommit=autocommit)


def indexes_of(table: str) -> dict:
    """{relation: [(index definition without its name, valid)]} of ``table`` and of each partition."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT c.relname, regexp_replace(pg_get_indexdef(i.indexrelid), '^.* USING ', ''), "
                       "i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
                       "WHERE (c.oid = %s::regclass OR c.oid IN (SELECT inhrelid FROM pg_inherits "
                       "WHERE inhparent = %s::regclass)) AND NOT EXISTS (SELECT FROM pg_constraint k "
                       "WHERE k.conindid = i.indexrelid)", [table, table])
        found = {}
        for relation, definition, valid in cursor.fetchall():
            found.setdefault(relation, []).append((definition, valid))
        return {relation: sorted(definitions) for relation, definitions in found.items()}


def test_each_partition_gets_its_own_index_attached_then_the_old_one_goes(table):
    index_rebuilds.build(TABLE, NEW, COLUMNS)
    index_rebuilds.drop(TABLE, OLD)

    found = indexes_of(TABLE)
    assert set(found) == {TABLE, *p.month_partitions(TABLE).values(), f"{TABLE}_legacy"}
    assert all(definitions == [("btree (status, id)", True)] for definitions in found.values()), found
    with connection.cursor() as cursor:  # the parent's is valid: every partition's is attached to it
        cursor.execute("SELECT count(*) FROM pg_inherits WHERE inhparent = %s::regclass", [NEW])
        assert cursor.fetchone()[0] == len(found) - 1
        cursor.execute(f"ANALYZE {TABLE}")
        cursor.execute(f"EXPLAIN SELECT id FROM {TABLE} WHERE status = 'WON' ORDER BY id DESC LIMIT 5")
        assert "Index Only Scan Backward" in "\n".join(row[0] for row in cursor.fetchall())

    index_rebuilds.build(TABLE, NEW, COLUMNS)  # once more: nothing to do
    assert indexes_of(TABLE) == found


def test_a_build_that_stopped_is_built_again(table):
    september = p.month_partitions(TABLE)[SEPTEMBER]
    own = f"{september}_{NEW}"
    with connection.cursor() as cursor, pytest.raises(Exception, match="could not create unique index"):
        # A CONCURRENTLY build that fails leaves its index invalid, as one stopped half way would.
        cursor.execute(f"CREATE UNIQUE INDEX CONCURRENTLY {own} ON {september} (status)")
    assert ("btree (status)", False) in indexes_of(TABLE)[september]

    index_rebuilds.build(TABLE, NEW, COLUMNS)

    assert ("btree (status, id)", True) in indexes_of(TABLE)[september]
    assert ("btree (status)", False) not in indexes_of(TABLE)[september]


def test_a_writer_is_not_held_up_while_the_build_waits_for_one_still_writing(table):
    september = p.month_partitions(TABLE)[SEPTEMBER]
    september_id = p.month_start_id(SEPTEMBER)
    with other_connection() as first, other_connection(autocommit=True) as second:
        first.execute(f"INSERT INTO {september} VALUES ({september_id} + 5000, 'WON')")  # open: the build waits
        errors = []
        build = threading.Thread(target=lambda: _build_in_thread(errors))
        build.start()
        try:
            time.sleep(0.5)
            second.execute("SET lock_timeout = '1s'")  # a plain CREATE INDEX queues each of these behind it
            for n in range(5):
                second.execute(f"UPDATE {TABLE} SET status = 'LOST' WHERE id = {september_id} + {n + 1}")
                second.execute(f"INSERT INTO {TABLE} VALUES ({september_id} + 6000 + {n}, 'LOST')")
                time.sleep(0.1)
            assert build.is_alive()  # still waiting for the first writer
        finally:
            first.commit()
            build.join(timeout=60)
    assert not errors and not build.is_alive()
    assert all(("btree (status, id)", True) in definitions for definitions in indexes_of(TABLE).values())


def test_an_index_left_invalid_by_a_partition_detached_meanwhile_is_validated(table):
    september = p.month_partitions(TABLE)[SEPTEMBER]
    with connection.cursor() as cursor:  # a build stopped, then an archive detached the month it lacked
        cursor.execute(f"CREATE INDEX {NEW} ON ONLY {TABLE} (status, id)")
        for partition in [f"{TABLE}_legacy", *p.month_partitions(TABLE).values()]:
            if partition != september:
                cursor.execute(f"CREATE INDEX {partition}_own ON {partition} (status, id)")
                cursor.execute(f"ALTER INDEX {NEW} ATTACH PARTITION {partition}_own")
        cursor.execute(f"ALTER TABLE {TABLE} DETACH PARTITION {september}")
        cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass", [NEW])
        assert cursor.fetchone() == (False,)
    try:
        index_rebuilds.build(TABLE, NEW, COLUMNS)
        with connection.cursor() as cursor:
            cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass", [NEW])
            assert cursor.fetchone() == (True,)
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE {september}")


def _build_in_thread(errors: list) -> None:
    try:
        index_rebuilds.build(TABLE, NEW, COLUMNS)
    except Exception as error:  # noqa: BLE001 - reported to the test's thread
        errors.append(error)
    finally:
        connection.close()


def index_names(table: str) -> set:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %s::regclass", [table])
        return {row[0] for row in cursor.fetchall()}


REPLACED = {  # table: (old index, new index, the new one's columns)
    Bet._meta.db_table: ("bet_status_idx", "bet_status_id_idx", "btree (status, id)"),
    LedgerEntry._meta.db_table: ("ledger_kind_idx", "ledger_kind_id_idx", "btree (kind, id)"),
    Round._meta.db_table: ("round_game_opened_idx", "round_game_opened_at_idx", "btree (game_id, opened_at)"),
}


def assert_ascending():
    for table, (old, new, columns) in REPLACED.items():
        assert old not in index_names(table) and new in index_names(table), table
        found = indexes_of(table)  # the table's and, partitioned, each partition's
        assert all((columns, True) in definitions for definitions in found.values()), found


@pytest.mark.services
def test_the_product_indexes_led_by_a_few_values_ascend_on_every_partition_both_ways_of_their_migrations():
    assert_ascending()
    assert len(indexes_of(Bet._meta.db_table)) > 2  # the bets' partitions are there to check
    try:
        call_command("migrate", "games", "0018", verbosity=0)
        call_command("migrate", "wallet", "0008", verbosity=0)
        for table, (old, new, columns) in REPLACED.items():
            assert old in index_names(table) and new not in index_names(table), table
            assert all((columns.replace(")", " DESC)"), True) in definitions
                       for definitions in indexes_of(table).values()), table
    finally:
        call_command("migrate", verbosity=0)
        call_command("db_roles", app_role.APP_ROLE, f"--password={app_role.APP_PASSWORD}", stdout=StringIO())
    assert_ascending()


def test_rebuild_packs_the_indexes_of_a_month_written_at_several_places_at_once(table):
    september = p.month_partitions(TABLE)[SEPTEMBER]
    with connection.cursor() as cursor:  # accounts' bets arrive interleaved: their index splits half full
        cursor.execute(f"CREATE INDEX {TABLE}_account_idx ON {TABLE} ((id % 997), id)")
        cursor.execute(f"INSERT INTO {TABLE} SELECT {p.month_start_id(SEPTEMBER)} + 2000 + n, 'WON' "
                       "FROM generate_series(1, 50000) n")
        cursor.execute(f"CREATE INDEX {september}_ccnew ON {september} (status)")  # as a stopped REINDEX left it
        cursor.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [f"{september}_ccnew"])

    before, after = index_rebuilds.rebuild(september)

    assert after < 0.8 * before
    assert indexes_of(TABLE)[september] == [("btree (((id % (997)::bigint)), id)", True),
                                            ("btree (status, id DESC)", True)]  # the stopped one's gone
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {september}")
        assert cursor.fetchone()[0] == 51000
