"""Writing the audit trail: one event per change, inside the change's own transaction.

Appending takes the chain lock (the last lock of the order in games/locks.py), so events are
chained in the order their transactions commit.
"""

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone

from audit.chain import GENESIS_HASH, event_hash
from audit.context import request_meta
from audit.models import AuditEvent

# An arbitrary constant naming the audit chain's advisory lock.
AUDIT_CHAIN_LOCK_KEY = 0x0BACCA7A


def lock_audit_chain() -> None:
    """Serialise appends to the audit hash chain until this transaction ends.

    PostgreSQL: a transaction-level advisory lock. SQLite: transactions begin IMMEDIATE (see
    settings), so the writer already holds the database's write lock.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [AUDIT_CHAIN_LOCK_KEY])


def actor_fields(actor) -> dict:
    """A user, or a string naming the system component (``system:<worker>``)."""
    if isinstance(actor, AbstractBaseUser):
        return {"actor_user_id": actor.pk, "actor": actor.get_username()}
    return {"actor_user_id": None, "actor": str(actor)}


def audit_record(*, actor, action: str, obj=None, object_type: str = "", object_id: str = "",
                 before=None, after=None, reason: str = "") -> AuditEvent:
    """Record an event about a model instance ``obj``, or about what object_type/object_id name."""
    if obj is not None:
        object_type, object_id = obj._meta.model_name, str(obj.pk)
    values = {
        **actor_fields(actor),
        "action": action,
        "object_type": object_type,
        "object_id": object_id,
        "before": before,
        "after": after,
        "reason": reason,
        **request_meta(),
    }
    with transaction.atomic():  # the services' own transaction; a new one for callers outside any
        lock_audit_chain()
        prev_hash = AuditEvent.objects.order_by("-id").values_list("hash", flat=True).first() or GENESIS_HASH
        values["created_at"] = timezone.now()
        return AuditEvent.objects.create(**values, prev_hash=prev_hash, hash=event_hash(prev_hash, values))
