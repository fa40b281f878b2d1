"""The sequencer: committed events get their leaves in the Merkle log, with no lock on the write path.

Writers only insert events. The sequencer, one at a time (it locks its own state row, which no
writer touches), appends leaves for events whose transactions have ended, and the perfect nodes
they complete. On PostgreSQL an event carries its inserting transaction's id (``xact_id``); the xmin
of the sequencer's snapshot is the oldest transaction still running, so every transaction below it
has committed (its events are visible) or rolled back (it has none). Each run takes the events of
transactions between the previous horizon and that one, in id order. So an event is sequenced only
once its transaction committed, never skipped, and an event whose transaction committed before
another's began comes first. A transaction left open holds the horizon back until it ends. Run
inside a transaction, the sequencer also takes that transaction's own events, which commit or roll
back with their leaves.
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


def _transaction_horizon(using: str = DEFAULT_DB_ALIAS) -> tuple[int, int | None]:
    """The oldest transaction still running, and this one's own id (None if it has none yet)."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint, "
                       "pg_current_xact_id_if_assigned()::text::bigint")
        return cursor.fetchone()


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
    with transaction.atomic(using=using):
        state = _locked_state(using)
        horizon, own = _transaction_horizon(using)
        # The sequencer's own transaction's events too (run inside a writer's transaction, it
        # commits or rolls back with them).
        pending = AuditEvent.objects.using(using).filter(
            Q(xact_id__gte=state.horizon, xact_id__lt=horizon) | Q(xact_id=own), leaf__isnull=True)
        rows = list(pending.order_by("id").values("id", *HASHED_FIELDS)[:CHUNK_EVENTS])
        if rows:
            state.tree_size = append_leaves(state.tree_size, rows, using)
        more = len(rows) == CHUNK_EVENTS
        if not more:
            state.horizon = horizon
        state.save(using=using)
        return len(rows), more


def sequence_pending(using: str = DEFAULT_DB_ALIAS) -> int:
    """Sequence every event whose transaction has ended; how many were sequenced."""
    total, more = 0, True
    while more:
        count, more = _sequence_chunk(using)
        total += count
    return total
