"""dbutils.partitions on a table of the test's own, partitioned by RANGE (id) with month-encoded ids:
partitions made ahead without waiting for writers, whole months archived to checked files and
attached again, nothing deleted."""

import gzip
import hashlib
import json
from datetime import date

import psycopg
import pytest
from django.db import connection

from dbutils import partitions as p
from dbutils.postgresql import urls
from tests import app_role

pytestmark = [pytest.mark.owner, pytest.mark.django_db(transaction=True)]
TABLE = "test_partitioned_events"


def month(text: str) -> date:
    return date.fromisoformat(f"{text}-01")


@pytest.fixture
def table():
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {TABLE} (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, "
                       f"note text NOT NULL DEFAULT '', CHECK (note <> 'forbidden')) PARTITION BY RANGE (id)")
        cursor.execute(f"CREATE INDEX {TABLE}_created_idx ON {TABLE} (created_at)")
        # Rows from before the table was partitioned: ids below every month's.
        cursor.execute(f"CREATE TABLE {TABLE}_legacy PARTITION OF {TABLE} FOR VALUES FROM (MINVALUE) "
                       f"TO ({p.month_start_id(month('2026-01'))})")
    yield TABLE
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {TABLE} CASCADE")
        cursor.execute(f"DROP SCHEMA IF EXISTS {p.ARCHIVE_SCHEMA} CASCADE")


def insert(at: str, count: int) -> None:
    first = p.month_start_id(month(at))
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {TABLE} (id, created_at, note) SELECT %s + n, %s::date + n, 'row ' || n "
                       f"FROM generate_series(1, %s) AS n", [first, f"{at}-01", count])


def count() -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {TABLE}")
        return cursor.fetchone()[0]


def test_ids_carry_their_month():
    assert p.month_of_id(p.month_start_id(month("2026-12")) + 12345) == month("2026-12")
    assert p.month_start_id(month("2027-01")) - p.month_start_id(month("2026-12")) == 1 << p.MONTH_SHIFT
    assert p.month_of_id(p.month_start_id(month("2027-01")) - 1) == month("2026-12")
    assert p.next_month(month("2026-12")) == month("2027-01")
    assert p.month_start_id(month("2600-12")) < 2**53  # exact as a JSON number in JavaScript


def test_ensure_attaches_this_month_and_two_ahead_once(table):
    made = p.ensure(table, today=date(2026, 12, 15))
    assert made == [f"{TABLE}_p202612", f"{TABLE}_p202701", f"{TABLE}_p202702"]
    assert p.ensure(table, today=date(2026, 12, 31)) == []
    assert p.ensure(table, today=date(2027, 1, 2)) == [f"{TABLE}_p202703"]
    insert("2027-02", 3)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT tableoid::regclass::text FROM {TABLE}")
        assert {name for (name,) in cursor.fetchall()} == {f"{TABLE}_p202702"}
        # The partition has the parent's index and CHECK, and the range's own CHECK is gone.
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", [f"{TABLE}_p202702"])
        assert any("created_at" in definition for (definition,) in cursor.fetchall())
        cursor.execute("SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                       "WHERE conrelid = %s::regclass AND contype = 'c'", [f"{TABLE}_p202702"])
        checks = dict(cursor.fetchall())
        assert f"{TABLE}_p202702_range" not in checks and any("forbidden" in text for text in checks.values())


def test_ensure_does_not_wait_for_a_writer(table):
    """A transaction that has written to the table and stays open (ROW EXCLUSIVE on the parent)
    does not hold ensure up: ATTACH takes SHARE UPDATE EXCLUSIVE."""
    p.ensure(table, today=date(2026, 12, 1), ahead=0)
    url = urls.to_url(app_role.owner_settings(), name=connection.settings_dict["NAME"])
    with psycopg.connect(url) as writer:
        writer.execute(f"INSERT INTO {TABLE} (id, created_at) VALUES (%s, now())",
                       [p.month_start_id(month("2026-12")) + 1])
        assert p.ensure(table, today=date(2026, 12, 1), ahead=2) == [f"{TABLE}_p202701", f"{TABLE}_p202702"]
        writer.rollback()


def test_archive_writes_whole_months_and_restore_attaches_them(table, tmp_path, monkeypatch):
    p.ensure(table, today=date(2026, 9, 1))
    insert("2026-09", 3)
    insert("2026-10", 5)
    insert("2026-11", 7)

    manifests = p.archive(table, before=date(2026, 11, 15), to=tmp_path)

    assert [(m.partition, m.month, m.rows) for m in manifests] == [
        (f"{TABLE}_p202609", "2026-09", 3), (f"{TABLE}_p202610", "2026-10", 5)]
    assert count() == 7  # November is not a whole month before the 15th
    for manifest in manifests:
        file = tmp_path / manifest.file
        assert hashlib.sha256(file.read_bytes()).hexdigest() == manifest.sha256
        assert json.loads((tmp_path / f"{manifest.partition}.json").read_text()) == manifest.as_json()
        lines = gzip.decompress(file.read_bytes()).decode().splitlines()
        assert len(lines) == manifest.rows and lines[0].startswith(str(manifest.id_from + 1))
    with connection.cursor() as cursor:  # detached, never deleted
        cursor.execute(f"SELECT count(*) FROM {p.ARCHIVE_SCHEMA}.{TABLE}_p202610")
        assert cursor.fetchone()[0] == 5
        cursor.execute(f"DROP TABLE {p.ARCHIVE_SCHEMA}.{TABLE}_p202609")  # as an operator may, once stored
    recorded = {manifest.partition for manifest in manifests}
    assert p.archive(table, before=date(2026, 11, 15), to=tmp_path, recorded=recorded) == []
    [again] = p.archive(table, before=date(2026, 11, 15), to=tmp_path)  # a file no record names: afresh
    assert again == manifests[1]  # the same bytes (gzip without a time stamp)

    assert p.restore(tmp_path / f"{TABLE}_p202609.copy.gz").rows == 3  # loaded from the file
    with connection.cursor() as cursor:  # its indexes built before, and taken by ATTACH as the parent's
        cursor.execute("SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT FROM pg_inherits h "
                       "WHERE h.inhrelid = i.indexrelid)) FROM pg_index i WHERE i.indrelid = %s::regclass",
                       [f"{TABLE}_p202609"])
        assert cursor.fetchone() == (2, 2)  # the primary key and created_at's, no second copy
    # An index the parent gained since the detach: built on the kept table before ATTACH, which
    # would build it under its locks.
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE INDEX {TABLE}_note_idx ON {TABLE} (note)")
    indexes_when_attached, attach = [], p._attach

    def noting_the_indexes(cursor, table, name, *args):
        cursor.execute("SELECT count(*) FROM pg_index WHERE indrelid = %s::regclass", [name])
        indexes_when_attached.append(cursor.fetchone()[0])
        return attach(cursor, table, name, *args)

    monkeypatch.setattr(p, "_attach", noting_the_indexes)
    assert p.restore(tmp_path / f"{TABLE}_p202610.json").rows == 5  # the archived table, attached back
    assert indexes_when_attached == [3]
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT FROM pg_inherits h "
                       "WHERE h.inhrelid = i.indexrelid)) FROM pg_index i WHERE i.indrelid = %s::regclass",
                       [f"{TABLE}_p202610"])
        assert cursor.fetchone() == (3, 3)
    assert count() == 15
    assert sorted(p.month_partitions(table)) == [month("2026-09"), month("2026-10"), month("2026-11")]
    with pytest.raises(p.ArchiveError, match="attached already"):
        p.restore(tmp_path / f"{TABLE}_p202609.json")


def test_archive_finishes_a_month_detached_but_not_moved(table, tmp_path):
    """DETACH commits before the move to ARCHIVE_SCHEMA: a run stopped between them left the month
    in public, where neither the partitions nor the archived tables are looked for."""
    p.ensure(table, today=date(2026, 9, 1), ahead=0)
    insert("2026-09", 2)
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {TABLE} DETACH PARTITION {TABLE}_p202609")
    [manifest] = p.archive(table, before=date(2026, 10, 1), to=tmp_path)
    assert (manifest.partition, manifest.rows) == (f"{TABLE}_p202609", 2)
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NULL, to_regclass(%s) IS NOT NULL",
                       [f"public.{TABLE}_p202609", f"{p.ARCHIVE_SCHEMA}.{TABLE}_p202609"])
        assert cursor.fetchone() == (True, True)


def test_restore_refuses_a_file_that_is_not_the_manifests(table, tmp_path):
    p.ensure(table, today=date(2026, 9, 1), ahead=0)
    insert("2026-09", 4)
    [manifest] = p.archive(table, before=date(2026, 10, 1), to=tmp_path)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {p.ARCHIVE_SCHEMA}.{manifest.partition}")
    file = tmp_path / manifest.file
    rows = gzip.decompress(file.read_bytes()).replace(b"row 2", b"row 9")
    file.write_bytes(gzip.compress(rows))
    with pytest.raises(p.ArchiveError, match="SHA-256"):
        p.restore(file)
    assert count() == 0 and p.month_partitions(table) == {}
