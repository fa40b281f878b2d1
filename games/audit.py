"""The audit trail: one event per change, written inside the change's own transaction."""

import contextvars
from contextlib import contextmanager

from django.contrib.auth.models import AbstractBaseUser

from games.models import AuditEvent

# Set by the request middleware so services can record where a change came from.
_request_meta = contextvars.ContextVar("audit_request_meta", default={"request_id": "", "source_ip": None})


@contextmanager
def request_context(request_id: str, source_ip: str | None):
    token = _request_meta.set({"request_id": request_id, "source_ip": source_ip})
    try:
        yield
    finally:
        _request_meta.reset(token)


def actor_fields(actor) -> dict:
    """A user, or a string naming the system component (``system:<worker>``)."""
    if isinstance(actor, AbstractBaseUser):
        return {"actor_user": actor, "actor": actor.get_username()}
    return {"actor_user": None, "actor": str(actor)}


def audit_record(*, actor, action: str, obj=None, object_type: str = "", object_id: str = "",
                 before=None, after=None, reason: str = "") -> AuditEvent:
    """Record an event about a model instance ``obj``, or about what object_type/object_id name."""
    if obj is not None:
        object_type, object_id = obj._meta.model_name, str(obj.pk)
    return AuditEvent.objects.create(
        **actor_fields(actor),
        action=action,
        object_type=object_type,
        object_id=object_id,
        before=before,
        after=after,
        reason=reason,
        **_request_meta.get(),
    )
