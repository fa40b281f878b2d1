"""The audit trail: one event per change, written inside the change's own transaction.

Events form a hash chain: each stores the previous event's hash and the SHA-256 of that hash and
its own canonical content. Appending takes the chain lock (the last lock of the order in
games/locks.py), so events are chained in the order their transactions commit.
"""

import contextvars
import hashlib
import json
from datetime import timezone as dt_timezone
from contextlib import contextmanager

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from games import locks
from games.models import AuditEvent

GENESIS_HASH = "0" * 64

# The fields that an event's hash covers, in this order.
HASHED_FIELDS = (
    "created_at", "actor", "actor_user_id", "action", "object_type", "object_id",
    "before", "after", "reason", "request_id", "source_ip",
)

# Set by the request middleware so services can record where a change came from.
_request_meta = contextvars.ContextVar("audit_request_meta", default={"request_id": "", "source_ip": None})
_request_user = contextvars.ContextVar("audit_request_user", default=None)


@contextmanager
def request_context(request_id: str, source_ip: str | None, user=None):
    meta_token = _request_meta.set({"request_id": request_id, "source_ip": source_ip})
    user_token = _request_user.set(user)
    try:
        yield
    finally:
        _request_meta.reset(meta_token)
        _request_user.reset(user_token)


def request_user():
    """The user of the request being served, if any (for changes Django makes, like a new staff user)."""
    return _request_user.get()


_acting_as = contextvars.ContextVar("audit_acting_as", default=None)


@contextmanager
def acting_as(actor: str):
    """Name the system component behind changes that Django's signals record (a command, say)."""
    token = _acting_as.set(actor)
    try:
        yield
    finally:
        _acting_as.reset(token)


def signal_actor(default: str):
    """Who made a change seen through a signal: a named component, the request's user, or ``default``."""
    user = _request_user.get()
    return _acting_as.get() or (user if user is not None and user.is_authenticated else default)


def actor_fields(actor) -> dict:
    """A user, or a string naming the system component (``system:<worker>``)."""
    if isinstance(actor, AbstractBaseUser):
        return {"actor_user_id": actor.pk, "actor": actor.get_username()}
    return {"actor_user_id": None, "actor": str(actor)}


def canonical_content(values: dict) -> str:
    """The event as canonical JSON: fixed keys, sorted, no insignificant white space."""
    content = {name: values[name] for name in HASHED_FIELDS}
    content["created_at"] = content["created_at"].astimezone(dt_timezone.utc).isoformat()
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(prev_hash: str, values: dict) -> str:
    return hashlib.sha256((prev_hash + canonical_content(values)).encode("utf-8")).hexdigest()


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
        **_request_meta.get(),
    }
    with transaction.atomic():  # the services' own transaction; a new one for callers outside any
        locks.lock_audit_chain()
        prev_hash = AuditEvent.objects.order_by("-id").values_list("hash", flat=True).first() or GENESIS_HASH
        values["created_at"] = timezone.now()
        return AuditEvent.objects.create(**values, prev_hash=prev_hash, hash=event_hash(prev_hash, values))


def audit_head() -> dict:
    """The newest event's id and hash: publish it outside the database to pin the whole chain."""
    head = AuditEvent.objects.order_by("-id").values("id", "hash", "created_at").first()
    return head or {"id": None, "hash": GENESIS_HASH, "created_at": None}


def audit_chain_check(chunk_size: int = 2000):
    """Walk the chain in order; return (events checked, head hash, first problem or None)."""
    expected_prev = GENESIS_HASH
    checked = 0
    rows = AuditEvent.objects.order_by("id").values("id", "prev_hash", "hash", *HASHED_FIELDS)
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
