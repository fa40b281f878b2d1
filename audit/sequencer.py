"""The sequencer: committed events get their leaves in the Merkle log, with no lock on the write path.

Writers only insert events. The sequencer, one at a time (it locks its own state row, which no
writer touches), appends leaves for events whose transactions have ended, and the perfect nodes
they complete. On PostgreSQL an event carries its inserting transaction's id (``xact_id``). Each run
reads the snapshot of the moment (``pg_current_snapshot()``): its ``xmax`` (every transaction below
it had begun) and its ``xip`` (those of them still running, in any database of the server). Every
transaction below ``xmax`` and not in ``xip`` has ended: committed (its events are visible to the
run's next statement) or rolled back (it has none). The run takes, in id order, the events of the
ended transactions among those it had not settled yet: the ones still running at the previous run
(``open_xacts``) and the ones that began since (from ``horizon``, the previous run's ``xmax``). The
transactions still running become ``open_xacts``. So an event is sequenced only once its
transaction committed, exactly once, never skipped; an event whose transaction committed before
another's began comes first; and no transaction left open, in this database or any other of the
server, holds back the events of the others (only its own, until it ends). Run inside a
transaction, the sequencer also takes that transaction's own events, which commit or roll back with
their leaves.

A run commits every CHUNK_EVENTS leaves. It holds the snapshot taken at its start for all its chunks,
and each chunk reads on from the last event sequenced: a backlog is read once (re-reading every
pending event for each chunk made it quadratic: 18 minutes for a million events). One run at a time
holds the state row, but runs may alternate between chunks; a run settles the state (horizon,
open_xacts) only if no other run settled it since it began, and a chunk never takes an event another
run took (it has a leaf), so alternating runs still give each event one leaf, in an order the rules
above allow.
"""

import functools
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Q

from audit import merkle
from audit.chain import HASHED_FIELDS, leaf_entry
from audit.models import AuditEvent, AuditLeaf, AuditNode, AuditSequencerState
from dbutils.plans import custom_plans

CHUNK_EVENTS = 5000  # events sequenced per transaction


def stored_perfect(level: int, index: int, using: str = DEFAULT_DB_ALIAS) -> bytes:
    """A perfect node as stored: a leaf hash at level 0, an AuditNode above."""
    if level == 0:
        return bytes.fromhex(AuditLeaf.objects.using(using).values_list("hash", flat=True).get(index=index))
    return bytes.fromhex(AuditNode.objects.using(using).values_list("hash", flat=True).get(level=level, index=index))


def _snapshot(using: str = DEFAULT_DB_ALIAS) -> tuple[int, set[int], int | None]:
    """The current snapshot's xmax (the first transaction id not yet begun), the transactions still
    running below it (in every database of the server), and this one's own id (None if it has none)."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_snapshot_xmax(s)::text::bigint, "
                       "ARRAY(SELECT x::text::bigint FROM pg_snapshot_xip(s) AS x), "
                       "pg_current_xact_id_if_assigned()::text::bigint "
                       "FROM (SELECT pg_current_snapshot() AS s) AS snapshot")
        xmax, running, own = cursor.fetchone()
        return xmax, set(running), own


def _locked_state(using: str = DEFAULT_DB_ALIAS) -> AuditSequencerState:
    # The row exists from the migration on; a flushed test database gets it back here.
    states = AuditSequencerState.objects.using(using)
    states.bulk_create([AuditSequencerState(pk=1)], ignore_conflicts=True)
    return states.select_for_update().get(pk=1)


def append_leaves(tree_size: int, rows: list[dict], using: str = DEFAULT_DB_ALIAS) -> int:
    """Give ``rows`` (event values: id and HASHED_FIELDS) leaves from ``tree_size`` on, with the
    perfect nodes they complete; the new tree size. The leaves and nodes travel as arrays, one
    statement each (settings.BULK_WRITES_IN_ONE_STATEMENT; off, Django's bulk_create writes them)."""
    hashes = [merkle.leaf_hash(leaf_entry(row)) for row in rows]
    nodes = merkle.new_perfect_nodes(tree_size, hashes, functools.partial(stored_perfect, using=using))
    if settings.BULK_WRITES_IN_ONE_STATEMENT:
        with connections[using].cursor() as cursor:
            cursor.execute(f"INSERT INTO {AuditLeaf._meta.db_table} (index, event_id, hash) "
                           "SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::varchar[])",
                           [list(range(tree_size, tree_size + len(rows))), [row["id"] for row in rows],
                            [h.hex() for h in hashes]])
            if nodes:
                cursor.execute(f"INSERT INTO {AuditNode._meta.db_table} (level, index, hash) "
                               "SELECT * FROM unnest(%s::smallint[], %s::bigint[], %s::varchar[])",
                               [[level for level, _ in nodes], [index for _, index in nodes],
                                [h.hex() for h in nodes.values()]])
    else:
        AuditLeaf.objects.using(using).bulk_create(
            AuditLeaf(index=tree_size + i, event_id=row["id"], hash=h.hex())
            for i, (row, h) in enumerate(zip(rows, hashes, strict=True)))
        AuditNode.objects.using(using).bulk_create(AuditNode(level=level, index=index, hash=h.hex())
                                                   for (level, index), h in nodes.items())
    return tree_size + len(rows)


@dataclass
class _Run:
    """What one run of the sequencer settles, fixed by the snapshot taken at its start: the events
    of ``ended`` transactions, walked in id order from ``after_id`` (the last one sequenced) in
    chunks of a transaction each. The snapshot is held for the whole run, so no event can join the
    set behind the walk: a transaction that ends later is not in it. The run settles the state
    (``horizon``, ``open_xacts``) only if no other run settled it meanwhile (``settled_from``)."""

    xmax: int
    running: set
    ended: Q
    settled_from: tuple
    after_id: int = 0


def _start_run(state: AuditSequencerState, inside_writer: bool, using: str) -> _Run:
    xmax, running, own = _snapshot(using)
    mine = set() if own is None else {own}
    # The transactions that ended since the last run: those it left open, and those begun since.
    ended = Q(xact_id__gte=state.horizon, xact_id__lt=xmax) & ~Q(xact_id__in=sorted(running | mine))
    unsettled = set(state.open_xacts)
    if unsettled - running - mine:
        ended |= Q(xact_id__in=sorted(unsettled - running - mine))
    if inside_writer and own is not None:
        # The writer's own events too (they commit or roll back with their leaves); it stays
        # open, as it may write more after this run.
        ended |= Q(xact_id=own)
        running.add(own)
    return _Run(xmax=xmax, running=running, ended=ended, settled_from=(state.horizon, list(state.open_xacts)))


def _sequence_chunk(run: _Run | None, inside_writer: bool, using: str = DEFAULT_DB_ALIAS) -> tuple[int, bool, _Run]:
    # The chunk's query planned for its own bounds each time: once prepared, a generic plan cannot
    # tell a backlog's wide range of transactions from a second's few, and read all of a backlog's
    # events by their transaction for every chunk (3.1 s a chunk at 10 million events, 6 ms planned
    # for its bounds). Only the chunk's: inside a writer's transaction (a settlement batch) the
    # writer's checks at its commit keep their cached plans.
    with transaction.atomic(using=using), custom_plans(using):
        state = _locked_state(using)  # its row lock gives this transaction an id
        if run is None:
            run = _start_run(state, inside_writer, using)
        # Each chunk reads on from the last event sequenced, never the run's earlier events again.
        # The leaves are looked up for the chunk's events alone (a join would let the planner hash
        # every leaf of the log for each chunk); only events another run took meanwhile have one.
        events = AuditEvent.objects.using(using).filter(run.ended, id__gt=run.after_id).order_by("id")
        candidates = list(events.values("id", *HASHED_FIELDS)[:CHUNK_EVENTS])
        taken = set(AuditLeaf.objects.using(using).filter(event_id__in=[row["id"] for row in candidates])
                    .values_list("event_id", flat=True)) if candidates else set()
        rows = [row for row in candidates if row["id"] not in taken]
        if rows:
            state.tree_size = append_leaves(state.tree_size, rows, using)
        if candidates:
            run.after_id = candidates[-1]["id"]
        more = len(candidates) == CHUNK_EVENTS
        if not more and (state.horizon, state.open_xacts) == run.settled_from:
            unsettled, horizon = set(state.open_xacts), state.horizon
            state.open_xacts = sorted(x for x in run.running if x in unsettled or horizon <= x < run.xmax)
            state.horizon = run.xmax
        state.save(using=using)
        return len(rows), more, run


def sequence_pending(using: str = DEFAULT_DB_ALIAS) -> int:
    """Sequence every event whose transaction has ended; how many were sequenced."""
    inside_writer = connections[using].in_atomic_block  # run inside a transaction that may write events
    total, more, run = 0, True, None
    while more:
        count, more, run = _sequence_chunk(run, inside_writer, using)
        total += count
    return total
