"""Writing the audit trail: one event per change, inside the change's own transaction.

An event is a plain insert: writers share no lock, so audited actions never wait on each other
here. The sequencer (audit.sequencer) later gives each committed event its leaf in the Merkle log;
in the embedded default (no broker) it runs as soon as the writing transaction commits (inside
``audit_sequencing_deferred``, once at its end), in production a Celery beat task runs it every second.
"""

import contextvars
import functools
import json
from contextlib import contextmanager

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, transaction
from django.utils import timezone

from audit import heads, merkle
from audit.context import request_meta, request_user_agent
from audit.models import AuditEvent, AuditHead, AuditSequencerState
from audit.sequencer import sequence_pending, stored_perfect
from core.errors import Conflict

_sequencing_deferred = contextvars.ContextVar("audit_sequencing_deferred", default=False)


def actor_fields(actor) -> dict:
    """A user, or a string naming the system component (``system:<worker>``)."""
    if isinstance(actor, AbstractBaseUser):
        return {"actor_user_id": actor.pk, "actor": actor.get_username()}
    return {"actor_user_id": None, "actor": str(actor)}


def audit_event_columns(*, actor, action: str, after=None, reason: str = "") -> dict:
    """The columns of an event, but for what it is about (object_type, object_id), for a writer that
    inserts the event in the same statement as its change (games.writes, a single bet); the writer
    then calls ``audit_written`` once the statement has run."""
    return {**actor_fields(actor), "action": action, "created_at": timezone.now(), "after": json.dumps(after),
            "reason": reason, **request_meta()}


def audit_written(using: str = DEFAULT_DB_ALIAS) -> None:
    """Events were inserted: in the embedded default, sequence them once the transaction commits
    (unless inside ``audit_sequencing_deferred``). robust: a failed run leaves them pending for the
    next one, never fails the change."""
    if settings.AUDIT_SEQUENCE_ON_COMMIT and not _sequencing_deferred.get():
        run = audit_sequence if using == DEFAULT_DB_ALIAS else functools.partial(audit_sequence, using=using)
        transaction.on_commit(run, using=using, robust=True)


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
    audit_written()
    return event


def auth_event_record(*, action: str, outcome: str, username: str, actor="anonymous", details=None) -> AuditEvent:
    """An event of the authentication log (audit.choices.AUTH_ACTIONS): about the user name as given
    (object_type "user"), with the outcome, the whole name and the request's user agent in ``after``
    and its address as ``source_ip``. Never a password, a token or a code: callers pass none, and
    ``details`` holds only what they name."""
    username = str(username or "")[:150]
    after = {"outcome": str(outcome), "username": username, "user_agent": request_user_agent(), **(details or {})}
    return audit_record(actor=actor, action=action, object_type="user", object_id=username[:64], after=after)


def audit_record_many(*, actor, action: str, changes: list, using: str = DEFAULT_DB_ALIAS) -> None:
    """Record one event per ``(obj, after)`` of ``changes``, as audit_record would one by one (same
    actor, action, time and request): for set-based writes such as bulk bets.

    The events travel as one JSON document unpacked by jsonb_to_recordset (a thousand events in one
    statement, with no per-row work in Python beyond the JSON itself): a shortcut around the ORM,
    whose off-switch (settings.BULK_WRITES_IN_ONE_STATEMENT) writes them with Django's bulk_create
    instead; tests/audit/test_sequencer.py holds both to what audit_record writes."""
    if not changes:
        return
    common = {**actor_fields(actor), "action": action, "created_at": timezone.now(), **request_meta()}
    if settings.BULK_WRITES_IN_ONE_STATEMENT:
        rows = json.dumps([{"object_type": obj._meta.model_name, "object_id": str(obj.pk), "after": after}
                           for obj, after in changes])
        with connections[using].cursor() as cursor:
            cursor.execute(
                f"""INSERT INTO {AuditEvent._meta.db_table} (created_at, actor_user_id, actor, action, object_type,
                        object_id, after, reason, request_id, source_ip)
                    SELECT %s, %s, %s, %s, v.object_type, v.object_id, v.after, '', %s, %s
                    FROM jsonb_to_recordset(%s::jsonb) AS v(object_type text, object_id text, after jsonb)""",
                [common["created_at"], common["actor_user_id"], common["actor"], action, common["request_id"],
                 common["source_ip"], rows],
            )
    else:
        AuditEvent.objects.using(using).bulk_create(
            AuditEvent(**common, object_type=obj._meta.model_name, object_id=str(obj.pk), after=after)
            for obj, after in changes
        )
    audit_written(using)


@contextmanager
def audit_sequencing_deferred():
    """Sequence the events recorded inside once, on leaving, instead of after each commit.

    For a job that commits thousands of audited actions in a row (seed_demo): each run of the
    sequencer costs a transaction of its own, whatever it finds. The events are the same and take
    their leaves in the same order (the sequencer takes every committed event, oldest first); if
    the job fails, the next run sequences what it committed.
    """
    token = _sequencing_deferred.set(True)
    try:
        yield
    finally:
        _sequencing_deferred.reset(token)
    if settings.AUDIT_SEQUENCE_ON_COMMIT:
        audit_sequence()


def audit_sequence(using: str = DEFAULT_DB_ALIAS) -> int:
    """Give every committed event its leaf in the Merkle log; how many were sequenced."""
    return sequence_pending(using)


def audit_head_sign() -> AuditHead:
    """Sequence what is pending, then sign a head of the whole log unless one already covers it;
    either way the head is in the sink outside the database when this returns. A stored head of
    that size that does not verify (written without the signing key) is neither published nor
    returned: Conflict (the alert check names it; the next event gives the log a size to sign)."""
    audit_sequence()
    size = AuditSequencerState.objects.values_list("tree_size", flat=True).first() or 0
    head = AuditHead.objects.filter(tree_size=size).first()
    if head is None:
        timestamp = int(timezone.now().timestamp() * 1000)
        signed = heads.sign(size, merkle.root(size, stored_perfect).hex(), timestamp)
        try:
            with transaction.atomic():
                head = AuditHead.objects.create(**signed)
        except IntegrityError:  # another run signed this size first
            head = AuditHead.objects.get(tree_size=size)
    if not heads.signature_holds(head.as_json(), heads.public_key_bytes()):
        raise Conflict("head", f"The stored head of tree size {size} is not signed by our key: it is not "
                               "published, and a head is signed again once the log grows.")
    heads.publish(head.as_json())
    return head
