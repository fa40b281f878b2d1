"""Reads of the audit trail: its head, its events, and a walk of the whole chain."""

from django.db.models import QuerySet

from audit.chain import GENESIS_HASH, HASHED_FIELDS, event_hash
from audit.models import AuditEvent

EVENT_FILTERS = ("action", "object_type", "object_id", "request_id")


def audit_head() -> dict:
    """The newest event's id, hash and time (the genesis hash while the log is empty): publish it
    outside the database to pin the whole chain."""
    head = AuditEvent.objects.order_by("-id").values("id", "hash", "created_at").first()
    return head or {"id": None, "hash": GENESIS_HASH, "created_at": None}


def audit_event_list(*, filters: dict | None = None) -> QuerySet[AuditEvent]:
    """Audit events, newest first. Filters (exact): ``action``, ``object_type``, ``object_id``, ``request_id``."""
    filters = filters or {}
    events = AuditEvent.objects.order_by("-id")
    for name in EVENT_FILTERS:
        if filters.get(name):
            events = events.filter(**{name: filters[name]})
    return events


def audit_chain_check(chunk_size: int = 2000):
    """Walk the hash chain of the events written before the Merkle log, in order; return (events
    checked, head hash, first problem or None)."""
    expected_prev = GENESIS_HASH
    checked = 0
    rows = AuditEvent.objects.filter(hash__isnull=False).order_by("id").values("id", "prev_hash", "hash",
                                                                                 *HASHED_FIELDS)
    for row in rows.iterator(chunk_size=chunk_size):
        if row["prev_hash"] != expected_prev:
            return checked, expected_prev, (
                f"event {row['id']}: its previous-hash link does not match the event before it "
                "(an event was deleted or inserted before it)")
        if event_hash(row["prev_hash"], row) != row["hash"]:
            return checked, expected_prev, f"event {row['id']}: its content does not match its hash (altered)"
        expected_prev = row["hash"]
        checked += 1
    return checked, expected_prev, None
