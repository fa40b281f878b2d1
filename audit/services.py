"""Writing the audit trail: one event per change, inside the change's own transaction.

An event is a plain insert: writers share no lock, so audited actions never wait on each other
here. The sequencer (audit.sequencer) later gives each committed event its leaf in the Merkle log;
in the embedded default (no broker) it runs as soon as the writing transaction commits, in
production a Celery beat task runs it every second.
"""

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from audit.context import request_meta
from audit.models import AuditEvent
from audit.sequencer import sequence_pending


def actor_fields(actor) -> dict:
    """A user, or a string naming the system component (``system:<worker>``)."""
    if isinstance(actor, AbstractBaseUser):
        return {"actor_user_id": actor.pk, "actor": actor.get_username()}
    return {"actor_user_id": None, "actor": str(actor)}


def audit_record(*, actor, action: str, obj=None, object_type: str = "", object_id: str = "",
                 before=None, after=None, reason: str = "") -> AuditEvent:
    """Record an event about a model instance ``obj``, or about what object_type/object_id name.
    Called inside the change's transaction, the event commits (or rolls back) with the change."""
    if obj is not None:
        object_type, object_id = obj._meta.model_name, str(obj.pk)
    event = AuditEvent.objects.create(
        **actor_fields(actor), action=action, object_type=object_type, object_id=object_id,
        before=before, after=after, reason=reason, created_at=timezone.now(), **request_meta(),
    )
    if settings.AUDIT_SEQUENCE_ON_COMMIT:
        # robust: a failed run leaves the event pending for the next one, never fails the change.
        transaction.on_commit(audit_sequence, robust=True)
    return event


def audit_sequence() -> int:
    """Give every committed event its leaf in the Merkle log; how many were sequenced."""
    return sequence_pending()
