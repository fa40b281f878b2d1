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
"""

import functools

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Q

from audit import merkle
from audit.chain import HASHED_FIELDS, leaf_entry
from audit.models import AuditEvent, AuditLeaf, AuditNode, AuditSequencerState

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
    perfect nodes they complete; the new tree size."""
    hashes = [merkle.leaf_hash(leaf_entry(row)) for row in rows]
    AuditLeaf.objects.using(using).bulk_create(AuditLeaf(index=tree_size + i, event_id=row["id"], hash=h.hex())
                                               for i, (row, h) in enumerate(zip(rows, hashes, strict=True)))
    nodes = merkle.new_perfect_nodes(tree_size, hashes, functools.partial(stored_perfect, using=using))
    AuditNode.objects.using(using).bulk_create(AuditNode(level=level, index=index, hash=h.hex())
                                               for (level, index), h in nodes.items())
    return tree_size + len(rows)


def _sequence_chunk(using: str = DEFAULT_DB_ALIAS) -> tuple[int, bool]:
    inside_writer = connections[using].in_atomic_block  # run inside a transaction that may write events
    with transaction.atomic(using=using):
        state = _locked_state(using)  # its row lock gives this transaction an id
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
        pending = AuditEvent.objects.using(using).filter(ended, leaf__isnull=True)
        rows = list(pending.order_by("id").values("id", *HASHED_FIELDS)[:CHUNK_EVENTS])
        if rows:
            state.tree_size = append_leaves(state.tree_size, rows, using)
        more = len(rows) == CHUNK_EVENTS
        if not more and xmax >= state.horizon:
            state.open_xacts = sorted(x for x in running if x in unsettled or state.horizon <= x < xmax)
            state.horizon = xmax
        state.save(using=using)
        return len(rows), more


def sequence_pending(using: str = DEFAULT_DB_ALIAS) -> int:
    """Sequence every event whose transaction has ended; how many were sequenced."""
    total, more = 0, True
    while more:
        count, more = _sequence_chunk(using)
        total += count
    return total
