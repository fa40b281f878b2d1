"""The audit events partitioned by month: the months ahead made without the application's role,
the append-only rules on every partition, and whole months archived to files the signed log vouches
for, still verified, and restored."""

import gzip
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, connections, transaction

from audit import partitioning
from audit.models import AuditEvent, AuditLeaf
from audit.services import audit_head_sign, audit_record
from audit.tasks import archive_partitions, ensure_partitions
from audit.verification import check_log
from dbutils import partitions
from dbutils.ddl_locks import LocksBusy
from tests import app_role
from tests.audit.helpers import sequence_all

TABLE = AuditEvent._meta.db_table


def month_now() -> date:
    """The month of the ids PostgreSQL gives now: asked by each test, so that a run crossing a
    month's end does not carry the month it started in."""
    return datetime.now(UTC).date().replace(day=1)


def run(statement, params=None):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else None


def record(n: int = 0):
    return audit_record(actor="system:test", action="test.event", object_type="test", object_id=str(n),
                        after={"n": n, "note": "tab\\there, line\\nbreak"})


@pytest.fixture
def last_month(transactional_db):
    """A partition of last month, as a database converted before it has: the legacy partition ends
    there instead of at this month (it holds no id of a month)."""
    month = partitioning.months_before(month_now(), 1)
    with app_role.as_owner():
        partitions.move_legacy_end(TABLE, partitions.month_start_id(month))
        partitions.ensure(TABLE, ahead=0, today=month)
    yield month
    with app_role.as_owner():
        run(f"DROP SCHEMA IF EXISTS {partitions.ARCHIVE_SCHEMA} CASCADE")
        run(f"DROP TABLE IF EXISTS {partitions.partition_name(TABLE, month)}")
        partitions.move_legacy_end(TABLE, partitions.month_start_id(month_now()))


@pytest.mark.owner
def test_the_events_are_partitioned_by_month_with_two_months_ahead(transactional_db):
    assert run("SELECT relkind FROM pg_class WHERE relname = %s", [TABLE]) == [("p",)]
    assert partitioning.partitions_ensure() == []  # the migration made them
    assert partitioning.months_ahead(TABLE) >= partitioning.MONTHS_AHEAD
    assert ensure_partitions() == []  # the daily task, as the owner (PARTITIONS_DATABASE)
    event = record()
    assert partitions.month_of_id(event.pk) == month_now()
    [(partition,)] = run(f"SELECT tableoid::regclass::text FROM {TABLE} WHERE id = %s", [event.pk])
    assert partition == partitions.partition_name(TABLE, month_now())
    # The chain's hashes stay unique: only the legacy partition, which keeps the unique indexes, has them.
    with pytest.raises(DatabaseError, match="audit_chain_only_in_legacy"), transaction.atomic():
        run(f"INSERT INTO {TABLE} (created_at, actor, action, object_type, object_id, reason, request_id, hash) "
            "VALUES (now(), 'x', 'test.event', 't', '1', '', '', repeat('a', 64))")


def test_the_application_role_cannot_rewrite_a_month_made_later(transactional_db):
    """A partition attached by ensure after the roles were granted: the application inserts through
    the table, and can neither change nor delete a row, nor detach, truncate or read the partition."""
    later = partitions.next_month(partitions.next_month(partitions.next_month(month_now())))
    later = partitions.next_month(later)
    with app_role.as_owner():
        made = partitions.ensure(TABLE, ahead=0, today=later)
    assert made == [partitions.partition_name(TABLE, later)]
    [(event_id,)] = run(f"INSERT INTO {TABLE} (id, created_at, actor, action, object_type, object_id, reason, "
                        "request_id) VALUES (%s, now(), 'x', 'test.event', 't', '1', '', '') RETURNING id",
                        [partitions.month_start_id(later) + 1])
    refused = [f"UPDATE {TABLE} SET reason = 'rewritten' WHERE id = {event_id}",
               f"DELETE FROM {TABLE} WHERE id = {event_id}",
               f"TRUNCATE {TABLE}",
               f"ALTER TABLE {TABLE} DETACH PARTITION {made[0]}",
               f"SELECT * FROM {made[0]}",
               f"UPDATE {made[0]} SET reason = 'rewritten'"]
    for statement in refused:
        with pytest.raises(DatabaseError), transaction.atomic():
            run(statement)
    assert run(f"SELECT reason FROM {TABLE} WHERE id = %s", [event_id]) == [("",)]


@pytest.mark.owner
def test_a_month_is_archived_verified_from_its_file_and_restored(last_month, settings, tmp_path, monkeypatch):
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    settings.AUDIT_HEAD_SINK_DIR = str(tmp_path / "heads")
    this_month = record(1)
    month_rows = []
    for n in range(3):  # events of last month's partition
        [(event_id,)] = run(
            f"INSERT INTO {TABLE} (id, created_at, actor, action, object_type, object_id, after, reason, "
            "request_id) VALUES (%s, now(), 'system:test', 'test.event', 'test', %s, %s, 'a\\b', '') RETURNING id",
            [partitions.month_start_id(last_month) + n + 1, str(n), '{"n": "tab\\there"}'])
        month_rows.append(event_id)
    sequence_all()
    audit_head_sign()
    files = tmp_path / "archive"

    hashed = []  # the files read back: none, as the run knows what it wrote
    monkeypatch.setattr(partitions, "read_manifest", lambda path: hashed.append(path))
    manifests = partitioning.partitions_archive(before=month_now(), to=files).manifests
    monkeypatch.undo()

    assert [(m["partition"], m["rows"]) for m in manifests] == [(partitions.partition_name(TABLE, last_month), 3)]
    assert hashed == []
    assert not AuditEvent.objects.filter(id__in=month_rows).exists()
    assert AuditEvent.objects.filter(pk=this_month.pk).exists()
    archived_event = AuditEvent.objects.get(action="partitions.archived")
    assert archived_event.after == {"manifests": manifests, "kept_online": {}}
    sequence_all()
    audit_head_sign()
    check = check_log()
    assert check.problem is None and check.archived == 3 and check.archived_checked == 0
    check = check_log(archives=files)
    assert check.problem is None and check.archived_checked == 3
    out = StringIO()
    call_command("audit_verify", "--archives", str(files), stdout=out)
    assert "3 leaves of archived events, 3 of them checked" in out.getvalue()

    file = files / manifests[0]["file"]
    original = file.read_bytes()
    file.write_bytes(gzip.compress(gzip.decompress(original).replace(b"a\\\\b", b"a\\\\c")))
    assert "SHA-256" in check_log(archives=files).problem
    with pytest.raises(CommandError, match="SHA-256"):
        call_command("audit_verify", "--archives", str(files), stdout=StringIO())
    file.write_bytes(original)

    out = StringIO()
    call_command("partitions", "restore", str(file), stdout=out)
    assert f"restored {manifests[0]['partition']}" in out.getvalue()
    assert sorted(AuditEvent.objects.filter(id__in=month_rows).values_list("id", flat=True)) == month_rows
    sequence_all()
    check = check_log()
    assert check.problem is None and check.archived == 0
    assert AuditLeaf.objects.filter(event_id__in=month_rows).count() == 3


@pytest.mark.owner
def test_an_archive_that_stops_records_the_files_it_wrote_and_a_month_archived_again_is_recorded_again(
        last_month, settings, tmp_path, monkeypatch):
    """The log is what vouches for an archived month (audit_verify finds its events' leaves through
    it): a run stopped after its files, or a month archived again after a restore (its files there
    already), used to leave the month archived with no event saying so."""
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    for n in range(3):
        run(f"INSERT INTO {TABLE} (id, created_at, actor, action, object_type, object_id, reason, request_id) "
            "VALUES (%s, now(), 'system:test', 'test.event', 'test', %s, '', '')",
            [partitions.month_start_id(last_month) + n + 1, str(n)])
    sequence_all()
    archive = partitions.archive

    def stopping_after_the_events(table, **options):
        written = archive(table, **options)
        if table == TABLE:
            raise LocksBusy("the locks on the accounts were busy")
        return written

    monkeypatch.setattr(partitions, "archive", stopping_after_the_events)
    with pytest.raises(LocksBusy):
        partitioning.partitions_archive(before=month_now(), to=tmp_path)
    monkeypatch.setattr(partitions, "archive", archive)
    [recorded] = AuditEvent.objects.filter(action="partitions.archived").values_list("after", flat=True)
    name = partitions.partition_name(TABLE, last_month)
    assert [(m["partition"], m["rows"]) for m in recorded["manifests"]] == [(name, 3)]
    assert partitioning.partitions_archive(before=month_now(), to=tmp_path).manifests == []  # recorded once

    partitioning.partitions_restore(files=[tmp_path / f"{name}.json"])
    sequence_all()
    assert check_log().archived == 0
    (tmp_path / "copied.json").write_text((tmp_path / f"{name}.json").read_text())  # from elsewhere:
    odd = {**json.loads((tmp_path / f"{name}.json").read_text()), "table": ["x"], "month": 7}
    (tmp_path / "odd.json").write_text(json.dumps(odd))  # neither is recorded
    assert partitioning.partitions_archive(before=month_now().replace(year=month_now().year - 5),
                                           to=tmp_path).manifests == []
    again = partitioning.partitions_archive(before=month_now(), to=tmp_path).manifests
    assert [m["partition"] for m in again] == [name]
    sequence_all()
    check = check_log(archives=tmp_path)
    assert check.problem is None and check.archived == 3 and check.archived_checked == 3


@pytest.mark.owner
def test_archive_refuses_the_current_month_and_unsequenced_events(transactional_db, settings, tmp_path):
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    with pytest.raises(CommandError, match="whole months that have ended"):
        call_command("partitions", "archive", "--before", f"{partitions.next_month(month_now()):%Y-%m-%d}",
                     "--to", str(tmp_path), stdout=StringIO())
    with pytest.raises(CommandError, match="YYYY-MM-DD"):
        call_command("partitions", "archive", "--before", "last month", "--to", str(tmp_path), stdout=StringIO())
    out = StringIO()
    call_command("partitions", "archive", "--to", str(tmp_path), stdout=out)  # the retention's default
    assert "no whole month before" in out.getvalue() and not list(tmp_path.iterdir())
    out = StringIO()
    call_command("partitions", "ensure", stdout=out)
    assert out.getvalue().strip() == "every partition needed is there"


@pytest.mark.owner
def test_the_daily_archive_does_nothing_until_a_directory_is_set_then_archives_past_retention(
        last_month, settings, tmp_path):
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    settings.RETENTION_MONTHS_ONLINE = 1  # this month only: last month is past retention
    run(f"INSERT INTO {TABLE} (id, created_at, actor, action, object_type, object_id, reason, request_id) "
        "VALUES (%s, now(), 'system:test', 'test.event', 'test', '1', '', '')", [partitions.month_start_id(last_month)])
    settings.PARTITIONS_ARCHIVE_DIR = ""
    assert archive_partitions() == [] and last_month in partitions.month_partitions(TABLE)
    settings.PARTITIONS_ARCHIVE_DIR = str(tmp_path)
    assert archive_partitions() == [partitions.partition_name(TABLE, last_month)]
    assert last_month not in partitions.month_partitions(TABLE)
    assert (tmp_path / f"{partitions.partition_name(TABLE, last_month)}.json").exists()
    assert archive_partitions() == []  # nothing more past retention


def test_partitions_refuses_the_application_role(transactional_db, tmp_path):
    with pytest.raises(CommandError, match="tables' owner"):
        call_command("partitions", "ensure", stdout=StringIO())


def test_the_retention_keeps_this_month_and_the_months_before_it():
    assert partitioning.months_before(date(2027, 1, 15), 12) == date(2026, 1, 1)
    assert partitioning.months_before(date(2027, 1, 15), 1) == date(2026, 12, 1)


WARM_UP, BEFORE, ARCHIVED_EVENTS = 20, 200, 20_000


def _percentile(values: list, fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@pytest.mark.services
def test_ensure_and_an_archive_while_bets_arrive_through_the_api(last_month, postgres, settings, tmp_path,
                                                                  game, integration, funded_account):
    """Bets keep arriving through the API while partitions are attached, a month is detached
    CONCURRENTLY into its file and attached again: not one bet fails. The bets' p99 during the
    maintenance is printed beside the p99 of the same client before it (not asserted: a figure)."""
    from games import services as game_services
    from tests.conftest import api_client_for

    funded_account("player-1", "100000.00")
    open_round = game_services.round_open(game_id=game.pk, actor=integration)
    with app_role.as_owner():
        run(f"INSERT INTO {TABLE} (id, created_at, actor, action, object_type, object_id, reason, request_id) "
            "SELECT %s + n, now(), 'system:test', 'test.event', 'test', n::text, '', '' "
            "FROM generate_series(1, %s) AS n", [partitions.month_start_id(last_month), ARCHIVED_EVENTS])
    sequence_all()
    client = api_client_for(integration, scopes=["bets"])
    stop, warmed = threading.Event(), threading.Event()
    timings = {"before": [], "during": []}
    statuses, phase = [], {"now": "before"}

    def bets():
        try:
            n = 0
            while not stop.is_set():
                started = time.perf_counter()
                response = client.post(f"/api/v1/rounds/{open_round.pk}/bets/", {
                    "account": "player-1", "bet_type": "BANKER", "stake": "1.00", "idempotency_key": f"load-{n}"},
                    format="json")
                if n >= WARM_UP:
                    timings[phase["now"]].append(time.perf_counter() - started)
                statuses.append(response.status_code)
                n += 1
                if n == WARM_UP + BEFORE:
                    warmed.set()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(bets)
        assert warmed.wait(120)
        phase["now"] = "during"
        with app_role.as_owner():
            made = partitions.ensure(TABLE, ahead=8)  # months no other test makes
            manifests = partitioning.partitions_archive(before=month_now(), to=tmp_path).manifests
            restored = partitioning.partitions_restore(files=[tmp_path / manifests[0]["file"]])
        during = len(timings["during"])
        stop.set()
        future.result(timeout=60)
    assert made and partitioning.months_ahead(TABLE) >= 8
    assert [m["rows"] for m in manifests] == [ARCHIVED_EVENTS] and restored[0]["rows"] == ARCHIVED_EVENTS
    assert during > 0 and set(statuses) == {201}, sorted(set(statuses))
    print(f"\nbets through the API: p99 {_percentile(timings['before'], 0.99) * 1000:.1f} ms before the "
          f"maintenance ({len(timings['before'])} bets), p99 {_percentile(timings['during'], 0.99) * 1000:.1f} ms "
          f"during ensure, archive and restore ({len(timings['during'])} bets)")
