"""Writing without a global lock, and the sequencer that orders committed events afterwards."""

import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import psycopg
import pytest
from django.db import connections, transaction
from psycopg import sql

from audit import merkle
from audit.chain import HASHED_FIELDS, leaf_entry
from audit.context import request_context
from audit.models import AuditEvent, AuditLeaf, AuditSequencerState
from audit.sequencer import sequence_pending, stored_perfect
from audit.services import (
    audit_head_sign,
    audit_record,
    audit_record_many,
    audit_sequence,
    audit_sequencing_deferred,
)
from dbutils.postgresql import urls as database_urls
from games import services as game_services
from games.models import GameInstance
from tests import app_role
from tests.audit.helpers import WAIT, sequence_all
from wallet.models import Account


def record(n: int = 0, **extra):
    return audit_record(actor="system:test", action="test.event", object_type="test", object_id=str(n), **extra)


def leaves() -> list[tuple[int, int]]:
    return list(AuditLeaf.objects.order_by("index").values_list("index", "event_id"))


def assert_log_whole():
    """Every event has exactly one leaf, indexes run 0..n-1, each leaf hash is its event's entry, and
    the stored perfect nodes give the root a recomputation from the leaves gives."""
    events = {row["id"]: row for row in AuditEvent.objects.values("id", *HASHED_FIELDS)}
    placed = leaves()
    assert [index for index, _ in placed] == list(range(len(events)))
    assert sorted(event_id for _, event_id in placed) == sorted(events)
    stream = merkle.RootStream()
    for index, event_id in placed:
        leaf = merkle.leaf_hash(leaf_entry(events[event_id]))
        assert leaf == stored_perfect(0, index)
        stream.append(leaf)
    assert merkle.root(len(placed), stored_perfect) == stream.root()
    assert AuditSequencerState.objects.get().tree_size == len(placed)


@contextmanager
def in_thread(target):
    """Run ``target`` in a thread with its own database connection; yields the thread's future."""
    def run():
        try:
            return target()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(run)


def test_in_the_embedded_default_an_event_is_sequenced_as_its_transaction_commits(transactional_db, settings):
    settings.AUDIT_SEQUENCE_ON_COMMIT = True
    with transaction.atomic():
        event = record()
        assert not AuditLeaf.objects.filter(event=event).exists()  # pending until the commit
    sequence_all()
    assert AuditLeaf.objects.get(event=event).index == AuditLeaf.objects.count() - 1
    assert_log_whole()


def test_inside_a_deferred_block_events_are_sequenced_once_on_leaving_in_commit_order(transactional_db, settings):
    settings.AUDIT_SEQUENCE_ON_COMMIT = True
    with audit_sequencing_deferred():
        events = []
        for n in range(3):
            with transaction.atomic():
                events.append(record(n))
        assert not AuditLeaf.objects.filter(event__in=events).exists()  # committed, still pending
    sequence_all()
    assert [event_id for _index, event_id in leaves()][-3:] == [event.pk for event in events]
    assert_log_whole()
    with transaction.atomic():
        after = record(3)
    sequence_all()
    assert AuditLeaf.objects.filter(event=after).exists()  # on commit again, once the block is left


def test_a_pending_event_waits_for_the_sequencer(db, settings):
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    event = record()
    assert not AuditLeaf.objects.filter(event=event).exists()
    assert audit_sequence() >= 1
    assert AuditLeaf.objects.filter(event=event).exists()
    assert audit_sequence() == 0  # nothing twice


def test_nothing_changes_without_its_event(db, operator, game, monkeypatch):
    def refuse(*args, **kwargs):
        raise RuntimeError("the audit table refused the event")

    before = GameInstance.objects.get(pk=game.pk).tie_multiplier
    monkeypatch.setattr(AuditEvent.objects, "create", refuse)
    with pytest.raises(RuntimeError):
        game_services.game_update(game_id=game.pk, actor=operator, reason="tuning", changes={"tie_multiplier": "7"})
    assert GameInstance.objects.get(pk=game.pk).tie_multiplier == before != 7



@pytest.mark.services
def test_a_writer_does_not_wait_for_another_writers_open_transaction(postgres, settings):
    """Before, every audited write took one advisory lock until commit: the second writer waited."""
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    release = threading.Event()
    written = threading.Event()

    def slow_writer():
        with transaction.atomic():
            record(1)
            written.set()
            assert release.wait(WAIT)

    with in_thread(slow_writer) as slow:
        assert written.wait(WAIT)
        with in_thread(lambda: record(2).pk) as quick:
            quick_id = quick.result(timeout=WAIT)  # commits while the slow transaction is still open
        assert not slow.done()
        release.set()
        slow.result(timeout=WAIT)
    assert AuditEvent.objects.filter(pk=quick_id).exists() and AuditEvent.objects.count() == 2


@pytest.mark.services
def test_an_event_committed_first_is_sequenced_while_an_older_transaction_is_in_flight(postgres, settings):
    """The older transaction's event has the lower id but is not visible yet: the newer one gets its
    leaf at once (it committed first), and the older one its leaf once it commits, after it: commit
    order, nothing skipped, nothing twice."""
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    release, written = threading.Event(), threading.Event()

    def older():
        with transaction.atomic():
            event = record(1)
            written.set()
            assert release.wait(WAIT)
        return event.pk

    with in_thread(older) as first:
        assert written.wait(WAIT)
        newer = record(2)  # committed (autocommit) while the older transaction runs
        assert sequence_pending() == 1
        assert [event_id for _, event_id in leaves()] == [newer.pk]
        release.set()
        older_id = first.result(timeout=WAIT)
    assert older_id < newer.pk
    assert sequence_pending() == 1
    assert [event_id for _, event_id in leaves()] == [newer.pk, older_id]
    assert_log_whole()


@pytest.mark.services
def test_an_open_transaction_that_writes_its_event_late_is_neither_waited_for_nor_skipped(postgres, settings):
    """A transaction of this database (a data load, say) took its id before the others and writes
    its event long after: the others are sequenced meanwhile; its event, once it commits."""
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    started, write, written, release = (threading.Event() for _ in range(4))

    def loader():
        with transaction.atomic(), connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_current_xact_id()::text::bigint")  # its transaction id, taken now
            xid = cursor.fetchone()[0]
            started.set()
            assert write.wait(WAIT)
            event = record(1)
            written.set()
            assert release.wait(WAIT)
        return event.pk, xid

    with in_thread(loader) as load:
        assert started.wait(WAIT)
        first = record(2)
        assert sequence_pending() == 1
        write.set()
        assert written.wait(WAIT)
        second = record(3)
        assert sequence_pending() == 1  # the open transaction's event waits for its commit
        release.set()
        loaded, xid = load.result(timeout=WAIT)
    assert xid in AuditSequencerState.objects.get().open_xacts  # remembered as open, below the horizon
    assert xid < AuditSequencerState.objects.get().horizon
    assert sequence_pending() == 1
    assert [event_id for _, event_id in leaves()] == [first.pk, second.pk, loaded]
    assert xid not in AuditSequencerState.objects.get().open_xacts
    assert_log_whole()


@pytest.fixture
def other_database(postgres):
    """A second database on the test server (another application's), made and dropped by the owner."""
    params = app_role.owner_settings()
    name = f"{params['NAME']}_other"[:63]

    def maintenance():
        return psycopg.connect(**database_urls.conninfo(params, name="postgres"), autocommit=True)

    with maintenance() as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield database_urls.conninfo(params, name=name)
    with maintenance() as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.mark.services
def test_a_long_transaction_in_another_database_does_not_hold_the_log_back(other_database, settings):
    """Before, the horizon was the oldest transaction running anywhere on the server: a data load in
    another database held every event of this one out of the log until it ended."""
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    with psycopg.connect(**other_database) as load:  # not autocommit: one transaction, left open
        load.execute("CREATE TABLE bulk (n integer)")
        load.execute("INSERT INTO bulk SELECT generate_series(1, 1000)")
        other_xid = load.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()[0]
        events = [record(n) for n in range(3)]
        assert sequence_pending() == 3
        assert [event_id for _, event_id in leaves()] == [event.pk for event in events]
        # Their transactions began after the load's: below them, it was the old horizon.
        xact_ids = AuditEvent.objects.filter(pk__in=[e.pk for e in events]).values_list("xact_id", flat=True)
        assert min(xact_ids) > other_xid
        head = audit_head_sign()
        assert head.tree_size == 3  # the signed head covers them while the load runs
        later = record(4)
        assert sequence_pending() == 1 and AuditLeaf.objects.filter(event=later).exists()
        load.rollback()
    assert sequence_pending() == 0
    assert other_xid not in AuditSequencerState.objects.get().open_xacts
    assert_log_whole()


@pytest.mark.services
def test_an_event_committed_before_another_transaction_began_comes_first(postgres, settings):
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    earlier = record(1)
    sequence_all()
    later = record(2)
    sequence_all()
    placed = dict((event_id, index) for index, event_id in leaves())
    assert placed[earlier.pk] < placed[later.pk]


@pytest.mark.services
def test_many_writers_and_several_sequencers_at_once_give_one_gapless_log(postgres, settings):
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    writers, per_writer, sequencers = 8, 25, 3
    done = threading.Event()

    def write(w):
        for i in range(per_writer):
            with transaction.atomic():
                record(w * 1000 + i)
                if i % 5 == 0:
                    record(w * 1000 + i, reason="a second event in the same transaction")

    def sequence():
        runs = 0
        while not done.is_set():
            sequence_pending()
            runs += 1
        return runs

    def run(target, *args):
        try:
            return target(*args)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=writers + sequencers) as pool:
        running = [pool.submit(run, sequence) for _ in range(sequencers)]
        for future in [pool.submit(run, write, w) for w in range(writers)]:
            future.result(timeout=120)
        done.set()
        assert all(future.result(timeout=WAIT) > 0 for future in running)
    sequence_all()
    assert AuditEvent.objects.count() == writers * (per_writer + per_writer // 5)
    assert_log_whole()


@pytest.mark.parametrize("in_one_statement", [True, False], ids=["one statement", "bulk_create"])
def test_events_recorded_together_are_those_recorded_one_by_one(transactional_db, settings, operator,
                                                                 in_one_statement):
    """audit_record_many (one statement, or with that shortcut off Django's bulk_create) writes what
    audit_record writes, in order, and the sequencer places them like any other events."""
    settings.AUDIT_SEQUENCE_ON_COMMIT = True
    settings.BULK_WRITES_IN_ONE_STATEMENT = in_one_statement
    accounts = [Account.objects.create(external_id=f"player-{n}") for n in range(3)]
    fields = ("actor_user_id", "actor", "action", "object_type", "object_id", "before", "after", "reason",
              "request_id", "source_ip")
    before_all = AuditEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
    with request_context("req-1", "192.0.2.7"), transaction.atomic():
        for account in accounts:
            audit_record(actor=operator, action="test.event", obj=account,
                         after={"n": account.external_id, "stake": "1.00"})
        one_by_one = list(AuditEvent.objects.filter(id__gt=before_all).order_by("id").values(*fields))
    with request_context("req-1", "192.0.2.7"), transaction.atomic():
        audit_record_many(actor=operator, action="test.event",
                          changes=[(account, {"n": account.external_id, "stake": "1.00"}) for account in accounts])
        together = list(AuditEvent.objects.filter(id__gt=before_all).order_by("id")
                        .values(*fields, "created_at", "xact_id"))[3:]
    assert [{name: row[name] for name in fields} for row in together] == \
        [{name: row[name] for name in fields} for row in one_by_one]
    assert together[0]["object_id"] == str(accounts[0].pk) and together[0]["source_ip"] == "192.0.2.7"
    assert len({row["created_at"] for row in together}) == 1  # one time for the set
    assert len({row["xact_id"] for row in together}) == 1 and together[0]["xact_id"] is not None
    sequence_all()
    assert_log_whole()


@pytest.mark.parametrize("in_one_statement", [True, False], ids=["one statement", "bulk_create"])
def test_a_backlog_is_sequenced_chunk_after_chunk_even_when_another_run_comes_between(
        transactional_db, settings, monkeypatch, in_one_statement):
    """A run reads on from the last event it sequenced, with the snapshot taken at its start; a
    whole run of another sequencer between two of its chunks takes what is left (and an event
    written since), and neither run gives an event a second leaf or leaves one out."""
    from audit import sequencer

    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    settings.BULK_WRITES_IN_ONE_STATEMENT = in_one_statement
    monkeypatch.setattr(sequencer, "CHUNK_EVENTS", 2)
    backlog = [record(n) for n in range(7)]
    chunk = sequencer._sequence_chunk
    between = []

    def chunk_then_another_run(run, inside_writer, using="default"):
        result = chunk(run, inside_writer, using)
        if not between:
            between.append(record(100))  # committed after the first run's snapshot
            between.append(sequence_pending())  # a whole run of another sequencer
        return result

    monkeypatch.setattr(sequencer, "_sequence_chunk", chunk_then_another_run)
    first_run = sequence_pending()
    monkeypatch.setattr(sequencer, "_sequence_chunk", chunk)
    assert first_run + between[1] == len(backlog) + 1
    assert [event_id for _, event_id in leaves()][:2] == [backlog[0].pk, backlog[1].pk]
    assert sorted(event_id for _, event_id in leaves()) == sorted([e.pk for e in backlog] + [between[0].pk])
    assert sequence_pending() == 0
    assert_log_whole()


def test_each_chunk_is_planned_for_its_own_bounds(transactional_db, settings, monkeypatch):
    """Once prepared, the chunk's query had a generic plan that read a whole backlog by transaction
    for every chunk (3.1 s a chunk at 10 million events): each chunk's transaction has PostgreSQL
    plan it for its own bounds, and the connection's own setting is untouched after it."""
    from audit import sequencer

    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    monkeypatch.setattr(sequencer, "CHUNK_EVENTS", 2)
    for n in range(5):
        record(n)
    modes, append_leaves = [], sequencer.append_leaves

    def noting_the_plan_mode(tree_size, rows, using="default"):
        with connections[using].cursor() as cursor:
            cursor.execute("SHOW plan_cache_mode")
            modes.append(cursor.fetchone()[0])
        return append_leaves(tree_size, rows, using)

    monkeypatch.setattr(sequencer, "append_leaves", noting_the_plan_mode)
    with transaction.atomic():  # inside a writer's transaction, as a settlement batch runs it
        assert sequence_pending() == 5
        with connections["default"].cursor() as cursor:  # the writer's commit keeps its cached plans
            cursor.execute("SHOW plan_cache_mode")
            assert cursor.fetchone()[0] == "auto"
    assert modes == ["force_custom_plan"] * 3
