"""Partition changes beside writers, on tables of the test's own shaped like the product's (accounts;
bets partitioned and referencing them; ledger entries partitioned and referencing both): a restore
meets no deadlock with a writer that read, then wrote, the accounts; an archive does not queue writers
behind a long reader; locks that stay busy leave nothing changed (dbutils.ddl_locks)."""

import threading
import time
from datetime import date

import psycopg
import pytest
from django.db import connection

from dbutils import ddl_locks
from dbutils import partitions as p
from dbutils.postgresql import urls
from tests import app_role

pytestmark = [pytest.mark.owner, pytest.mark.django_db(transaction=True)]
ACCOUNTS, BETS, LEDGER = "test_lock_accounts", "test_lock_bets", "test_lock_ledger"
SEPTEMBER = date(2026, 9, 1)


@pytest.fixture
def tables():
    legacy_end = p.month_start_id(SEPTEMBER)
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {ACCOUNTS} (id bigint PRIMARY KEY, balance numeric NOT NULL DEFAULT 0)")
        cursor.execute(f"INSERT INTO {ACCOUNTS} (id) VALUES (1), (2)")
        cursor.execute(f"CREATE TABLE {BETS} (id bigint PRIMARY KEY, account_id bigint NOT NULL "
                       f"REFERENCES {ACCOUNTS}) PARTITION BY RANGE (id)")
        cursor.execute(f"CREATE TABLE {LEDGER} (id bigint PRIMARY KEY, account_id bigint NOT NULL "
                       f"REFERENCES {ACCOUNTS}, bet_id bigint REFERENCES {BETS} DEFERRABLE INITIALLY DEFERRED) "
                       f"PARTITION BY RANGE (id)")
        cursor.execute(f"CREATE INDEX {LEDGER}_account_idx ON {LEDGER} (account_id) WHERE bet_id IS NOT NULL")
        cursor.execute(f"CREATE INDEX {LEDGER}_bet_idx ON {LEDGER} (bet_id)")
        for table in (BETS, LEDGER):
            cursor.execute(f"CREATE TABLE {table}_legacy PARTITION OF {table} FOR VALUES FROM (MINVALUE) "
                           f"TO ({legacy_end})")
    for table in (BETS, LEDGER):
        p.ensure(table, today=SEPTEMBER, ahead=3)
    september, december = p.month_start_id(SEPTEMBER), p.month_start_id(date(2026, 12, 1))
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {BETS} VALUES ({september} + 1, 1), ({december} + 1, 2)")
        cursor.execute(f"INSERT INTO {LEDGER} VALUES ({september} + 1, 1, {september} + 1), "
                       f"({december} + 1, 2, {december} + 1)")
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {LEDGER}, {BETS}, {ACCOUNTS} CASCADE")
        cursor.execute(f"DROP SCHEMA IF EXISTS {p.ARCHIVE_SCHEMA} CASCADE")


def other_connection(*, autocommit: bool = False) -> psycopg.Connection:
    return psycopg.connect(urls.to_url(app_role.owner_settings(), name=connection.settings_dict["NAME"]),
                           autocommit=autocommit)


def archive_september(tmp_path) -> list:
    return [*p.archive(LEDGER, before=date(2026, 10, 1), to=tmp_path),
            *p.archive(BETS, before=date(2026, 10, 1), to=tmp_path)]


class Writer(threading.Thread):
    """A bet's shape: reads an account, waits for ``go``, then writes it, in one transaction."""

    def __init__(self, go: threading.Event):
        super().__init__(daemon=True)
        self.go, self.read, self.error = go, threading.Event(), None

    def run(self):
        with other_connection() as writer:
            try:
                writer.execute(f"SELECT balance FROM {ACCOUNTS} WHERE id = 1")
                self.read.set()
                self.go.wait(10)
                writer.execute(f"UPDATE {ACCOUNTS} SET balance = balance + 1 WHERE id = 1")
                writer.commit()
            except psycopg.Error as error:
                self.error = error


def test_restore_meets_no_deadlock_with_a_writer_that_read_then_writes(tables, tmp_path):
    """ATTACH took SHARE ROW EXCLUSIVE on the accounts, then waited for ACCESS EXCLUSIVE behind the
    writer's read, which then waited to write behind it: PostgreSQL's deadlock detector failed one."""
    manifests = archive_september(tmp_path)
    with connection.cursor() as cursor:  # the ledger's restore validates its keys against the bets
        cursor.execute(f"DROP TABLE {p.ARCHIVE_SCHEMA}.{LEDGER}_p202609")
    p.restore(tmp_path / f"{BETS}_p202609.json")
    go, failures = threading.Event(), []
    writer = Writer(go)
    writer.start()
    assert writer.read.wait(10)

    def restore():
        try:
            p.restore(tmp_path / f"{LEDGER}_p202609.json")
        except Exception as error:  # noqa: BLE001 - asserted below, in the test's thread
            failures.append(error)
        finally:
            connection.close()

    restoring = threading.Thread(target=restore, daemon=True)
    restoring.start()
    with other_connection(autocommit=True) as watcher:
        deadline = time.monotonic() + 10
        while not watcher.execute("SELECT EXISTS (SELECT FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                                  "WHERE c.relname = %s AND NOT l.granted)", [ACCOUNTS]).fetchone()[0]:
            assert time.monotonic() < deadline, "the restore never waited for the accounts"
            time.sleep(0.01)
    go.set()  # the writer now writes what it read, while the restore waits for the accounts
    writer.join(10)
    restoring.join(60)
    assert writer.error is None and failures == []
    assert not restoring.is_alive()
    assert {m.partition for m in manifests} == {f"{BETS}_p202609", f"{LEDGER}_p202609"}
    assert sorted(p.month_partitions(LEDGER))[0] == SEPTEMBER
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT balance FROM {ACCOUNTS} WHERE id = 1")
        assert cursor.fetchone()[0] == 1


def test_an_archive_does_not_queue_writers_behind_a_long_reader(tables, tmp_path):
    """Dropping an archived month's foreign keys takes ACCESS EXCLUSIVE on the accounts; it waited
    behind a reader's open transaction for as long as it stayed, and every writer behind it."""
    finished, failures = threading.Event(), []

    def archive():
        try:
            archive_september(tmp_path)
        except Exception as error:  # noqa: BLE001 - asserted below, in the test's thread
            failures.append(error)
        finally:
            connection.close()
            finished.set()

    with other_connection() as reader, other_connection() as writer, other_connection(autocommit=True) as watcher:
        reader.execute(f"SELECT count(*) FROM {ACCOUNTS}")  # and stays open
        threading.Thread(target=archive, daemon=True).start()
        deadline = time.monotonic() + 10
        while not watcher.execute("SELECT EXISTS (SELECT FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                                  "WHERE c.relname = %s AND l.mode = 'AccessExclusiveLock')", [ACCOUNTS]).fetchone()[0]:
            assert time.monotonic() < deadline, "the archive never asked for the accounts"
            time.sleep(0.01)
        writer.execute("SET lock_timeout = '1s'")
        for account in (1, 2, 1, 2, 1):  # over several of the archive's tries
            writer.execute(f"UPDATE {ACCOUNTS} SET balance = balance + 1 WHERE id = %s", [account])
            writer.commit()
            time.sleep(0.1)
        assert not finished.is_set()  # still waiting for the reader
        reader.rollback()
        assert finished.wait(30) and failures == []
    assert sorted(p.month_partitions(BETS)) == sorted(p.month_partitions(LEDGER)) == [
        date(2026, 10, 1), date(2026, 11, 1), date(2026, 12, 1)]
    assert sorted(path.name for path in tmp_path.glob("*.json")) == [f"{BETS}_p202609.json", f"{LEDGER}_p202609.json"]


def test_locks_that_stay_busy_leave_the_restore_undone_and_it_can_run_again(tables, tmp_path, monkeypatch):
    archive_september(tmp_path)
    p.restore(tmp_path / f"{BETS}_p202609.json")
    monkeypatch.setattr(ddl_locks, "GIVE_UP_SECONDS", 1.0)
    with other_connection() as reader:
        reader.execute(f"SELECT count(*) FROM {ACCOUNTS}")  # and stays open
        with pytest.raises(ddl_locks.LocksBusy, match=ACCOUNTS):
            p.restore(tmp_path / f"{LEDGER}_p202609.json")
        assert SEPTEMBER not in p.month_partitions(LEDGER)
        with connection.cursor() as cursor:  # still staged, with its keys
            cursor.execute(f"SELECT count(*) FROM {p.ARCHIVE_SCHEMA}.{LEDGER}_p202609")
            assert cursor.fetchone()[0] == 1
    assert p.restore(tmp_path / f"{LEDGER}_p202609.json").rows == 1
    assert SEPTEMBER in p.month_partitions(LEDGER)


def test_a_detach_left_pending_by_a_busy_try_is_finalized_by_the_next(tables, tmp_path):
    """DETACH … CONCURRENTLY commits its first transaction, then waits for the table's readers: a
    try that gives up there leaves the month pending, and the next try must FINALIZE it."""
    finished, failures = threading.Event(), []

    def archive():
        try:
            p.archive(LEDGER, before=date(2026, 10, 1), to=tmp_path)
        except Exception as error:  # noqa: BLE001 - asserted below, in the test's thread
            failures.append(error)
        finally:
            connection.close()
            finished.set()

    with other_connection() as reader, other_connection(autocommit=True) as watcher:
        reader.execute(f"SELECT count(*) FROM {LEDGER}")  # and stays open
        threading.Thread(target=archive, daemon=True).start()
        deadline = time.monotonic() + 10
        while not watcher.execute("SELECT EXISTS (SELECT FROM pg_inherits WHERE inhdetachpending "
                                  "AND inhrelid = %s::regclass)", [f"{LEDGER}_p202609"]).fetchone()[0]:
            assert time.monotonic() < deadline, "the detach never got to its second transaction"
            time.sleep(0.01)
        time.sleep(1)  # several tries, each giving up behind the reader
        assert not finished.is_set()
        reader.rollback()
        assert finished.wait(30) and failures == []
    assert SEPTEMBER not in p.month_partitions(LEDGER)
    assert (tmp_path / f"{LEDGER}_p202609.json").exists()


def test_a_restore_leaves_only_catalog_work_for_its_locks(tables, tmp_path, monkeypatch):
    """What scans the month (its indexes, its range's CHECK, its keys' validation) is done before
    the attach takes the accounts and the bets: ATTACH building the indexes under those locks held
    every bet for 21 s at 10 million bets."""
    archive_september(tmp_path)
    with connection.cursor() as cursor:
        for name in (f"{BETS}_p202609", f"{LEDGER}_p202609"):
            cursor.execute(f"DROP TABLE {p.ARCHIVE_SCHEMA}.{name}")
    p.restore(tmp_path / f"{BETS}_p202609.json")
    run_locked, seen = ddl_locks.run_locked, []

    def looking_first(work, **options):
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_index WHERE indrelid = %s::regclass",
                           [f"{p.ARCHIVE_SCHEMA}.{LEDGER}_p202609"])
            indexes = cursor.fetchone()[0]
            cursor.execute("SELECT conname, convalidated FROM pg_constraint WHERE conrelid = %s::regclass "
                           "AND contype IN ('c', 'f') AND conparentid = 0 ORDER BY conname",
                           [f"{p.ARCHIVE_SCHEMA}.{LEDGER}_p202609"])
            seen.append((indexes, cursor.fetchall()))
        return run_locked(work, **options)

    monkeypatch.setattr(ddl_locks, "run_locked", looking_first)
    p.restore(tmp_path / f"{LEDGER}_p202609.json")
    keys = [(f"{LEDGER}_account_id_fkey", True), (f"{LEDGER}_bet_id_fkey", True)]
    assert seen[-1] == (3, [*keys, (f"{LEDGER}_p202609_range", True)])  # the attach's: the primary key, the indexes
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_index i WHERE indrelid = %s::regclass AND EXISTS "
                       "(SELECT FROM pg_inherits h WHERE h.inhrelid = i.indexrelid)", [f"{LEDGER}_p202609"])
        assert cursor.fetchone()[0] == 3  # all taken as the parent's, none built again


def ledger_rows_read() -> int:
    """The ledger's rows read so far, by every session (its statistics flushed first)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0) "
                       "FROM pg_stat_user_tables WHERE relname LIKE %s", [f"{LEDGER}%"])
        return cursor.fetchone()[0]


def ledger_key(*, columns: str = "conname, convalidated") -> list:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM pg_constraint WHERE conrelid = %s::regclass "
                       "AND confrelid = %s::regclass AND conparentid = 0", [LEDGER, BETS])
        return cursor.fetchall()


def test_a_bets_month_is_detached_without_reading_the_ledger_online(tables, tmp_path, monkeypatch):
    """PostgreSQL proves a detached month unreferenced by joining it with every ledger entry online,
    holding the ledger in SHARE mode meanwhile (a bet waited 2.4 s at 10 million bets). The archive
    probes the ledger's index for the month's ids instead, and validates the key afterwards, online."""
    september, december = p.month_start_id(SEPTEMBER), p.month_start_id(date(2026, 12, 1))
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {BETS} SELECT {september} + 1 + n, 1 FROM generate_series(1, 20000) n")
        cursor.execute(f"INSERT INTO {BETS} SELECT {december} + 1 + n, 2 FROM generate_series(1, 20000) n")
        cursor.execute(f"INSERT INTO {LEDGER} SELECT {december} + 1 + n, 2, {december} + 1 + n "
                       f"FROM generate_series(1, 20000) n")
        cursor.execute(f"ANALYZE {BETS}, {LEDGER}")
    validate, reads = p.validate_keys_left, []

    def counting_first(table, **options):
        reads.append(ledger_rows_read())
        validate(table, **options)

    monkeypatch.setattr(p, "validate_keys_left", counting_first)
    archive_september(tmp_path)
    # the last two: after the ledger's detach, and after the bets', each before its validation
    assert reads[-1] - reads[-2] < 100  # PostgreSQL's proof read the 20,000 entries of December
    assert ledger_key(columns="conname, convalidated, condeferrable, condeferred") == [
        (f"{LEDGER}_bet_id_fkey", True, True, True)]
    assert SEPTEMBER not in p.month_partitions(BETS)
    # the key is whole again, as it was (deferred): an entry for an archived bet is refused
    with other_connection() as writer, pytest.raises(psycopg.errors.ForeignKeyViolation):
        writer.execute(f"INSERT INTO {LEDGER} VALUES ({december} + 99999, 1, {september} + 2)")
        writer.commit()


def test_a_bets_month_an_online_entry_references_is_not_detached(tables, tmp_path):
    september, december = p.month_start_id(SEPTEMBER), p.month_start_id(date(2026, 12, 1))
    with connection.cursor() as cursor:  # paid in December
        cursor.execute(f"INSERT INTO {LEDGER} VALUES ({december} + 2, 1, {september} + 1)")
    p.archive(LEDGER, before=date(2026, 10, 1), to=tmp_path)
    with pytest.raises(p.ArchiveError, match=f"{LEDGER} still references rows of {BETS}_p202609"):
        p.archive(BETS, before=date(2026, 10, 1), to=tmp_path)
    assert SEPTEMBER in p.month_partitions(BETS)
    assert ledger_key() == [(f"{LEDGER}_bet_id_fkey", True)]


def test_a_key_left_not_valid_by_a_stopped_run_is_validated_by_the_next(tables, tmp_path):
    archive_september(tmp_path)
    with connection.cursor() as cursor:  # as a run stopped between its detach and the validation leaves it
        cursor.execute(f"ALTER TABLE {LEDGER} DROP CONSTRAINT {LEDGER}_bet_id_fkey")
        cursor.execute(f"ALTER TABLE {LEDGER} ADD CONSTRAINT {LEDGER}_bet_id_fkey FOREIGN KEY (bet_id) "
                       f"REFERENCES {BETS} DEFERRABLE INITIALLY DEFERRED NOT VALID")
    assert ledger_key() == [(f"{LEDGER}_bet_id_fkey", False)]
    p.restore(tmp_path / f"{BETS}_p202609.json")
    assert ledger_key() == [(f"{LEDGER}_bet_id_fkey", True)]
    p.restore(tmp_path / f"{LEDGER}_p202609.json")  # takes the parent's key as its own
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {LEDGER}")
        assert cursor.fetchone()[0] == 2


def test_a_key_without_an_index_to_probe_is_left_to_postgresql(tables, tmp_path):
    """Probing a column with no index would read the whole table under the detach's locks: such a
    key stays as it is, and PostgreSQL's own detach proves it."""
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {LEDGER}_bet_idx")
    key = ledger_key(columns="oid")
    archive_september(tmp_path)
    assert SEPTEMBER not in p.month_partitions(BETS)
    assert ledger_key(columns="oid") == key  # never dropped (a probed key is made again: a new one)


def test_a_ledger_month_restored_before_its_bets_does_not_stop_their_restore(tables, tmp_path):
    """A restore that fails validating a staged month's keys leaves them NOT VALID in the archive's
    schema: the bets' restore must not trip on them."""
    archive_september(tmp_path)
    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        p.restore(tmp_path / f"{LEDGER}_p202609.json")  # its bets are not back yet
    p.restore(tmp_path / f"{BETS}_p202609.json")
    p.restore(tmp_path / f"{LEDGER}_p202609.json")
    assert SEPTEMBER in p.month_partitions(LEDGER)
    assert ledger_key() == [(f"{LEDGER}_bet_id_fkey", True)]
