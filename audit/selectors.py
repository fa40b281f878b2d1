"""Reads of the audit trail: its signed head, its events, proofs, and the chain of older events.

Each reads from the database alias ``using`` (the default unless told)."""

import base64

from django.core.exceptions import ImproperlyConfigured, ObjectDoesNotExist
from django.db import DEFAULT_DB_ALIAS
from django.db.models import Count, F, Min, OuterRef, Q, QuerySet, Subquery, TextField, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce

from audit import heads, merkle
from audit.chain import GENESIS_HASH, HASHED_FIELDS, event_hash, leaf_entry
from audit.choices import AUTH_ACTIONS
from audit.models import AuditEvent, AuditHead, AuditLeaf, AuditSequencerState
from audit.sequencer import stored_perfect
from core.errors import Conflict, Unavailable


class ProofError(Conflict):
    """A proof asked of sizes or an event the log cannot give (yet): at odds with the state of the
    log rather than malformed, so the API answers 409; the message names the field."""


class HeadKeyMissing(Unavailable):
    """No key to check heads with (or a broken one): the API answers 503 naming the setting, the
    admin shows the events with a notice."""


# Heads looked at, newest first, for one that verifies: past them the page shows none (and the alert
# check names the heads that do not verify).
HEADS_TRIED = 100


def audit_latest_head(*, using: str = DEFAULT_DB_ALIAS) -> AuditHead | None:
    """The latest stored head whose signature holds under the public key. A head that does not
    verify (a row written by someone without the signing key) is never shown or used: it is passed
    over here, and ``audit_unverified_heads`` (the alert check) names it."""
    newest_first = AuditHead.objects.using(using).order_by("-tree_size")
    latest = newest_first.first()
    if latest is None or heads.head_verifies(latest.as_json()):
        return latest
    return next((head for head in newest_first[1:HEADS_TRIED] if heads.head_verifies(head.as_json())), None)


def audit_unverified_heads(*, limit: int = HEADS_TRIED, using: str = DEFAULT_DB_ALIAS) -> list[AuditHead]:
    """Stored heads whose signature does not hold: among the ``limit`` largest and the ``limit`` last
    written (those the page, the API and the proofs would use). ``check_log`` checks every head."""
    candidates = {head.pk: head for query in (AuditHead.objects.using(using).order_by("-tree_size"),
                                              AuditHead.objects.using(using).order_by("-pk"))
                  for head in query[:limit]}
    return sorted((head for head in candidates.values() if not heads.head_verifies(head.as_json())),
                  key=lambda head: head.tree_size)


def audit_log_size(*, using: str = DEFAULT_DB_ALIAS) -> dict:
    """The events sequenced into the log and those still pending."""
    return {"tree_size": AuditSequencerState.objects.using(using).values_list("tree_size", flat=True).first() or 0,
            "pending": audit_pending_events(using=using).count()}


def _head_key() -> bytes:
    try:
        return heads.public_key_bytes()
    except ImproperlyConfigured as error:
        raise HeadKeyMissing("AUDIT_PUBLIC_KEY", f"Heads cannot be verified: {error}") from None


def audit_log_status(*, using: str = DEFAULT_DB_ALIAS) -> dict:
    """The latest signed head that verifies, the public key that checks it, and the log's size and
    pending events; HeadKeyMissing where no key is configured to check heads."""
    public_key = _head_key()
    head = audit_latest_head(using=using)
    return {"head": head.as_json() if head else None, "public_key": base64.b64encode(public_key).decode("ascii"),
            "key_id": heads.key_id(public_key), **audit_log_size(using=using)}


def audit_public_head(*, using: str = DEFAULT_DB_ALIAS) -> dict:
    """For the public page: the latest signed head and the public key that checks it (None where no
    signing key is configured yet, so the page still loads)."""
    head = audit_latest_head(using=using)
    try:
        public_key = heads.public_key_b64()
    except ImproperlyConfigured:
        public_key = None
    return {"head": head.as_json() if head else None, "public_key": public_key}


def _tree_size(tree_size: int | None, field: str, using: str) -> int:
    size = AuditSequencerState.objects.using(using).values_list("tree_size", flat=True).first() or 0
    if tree_size is None:
        _head_key()  # without it no head verifies: say so rather than "no signed head yet"
        head = audit_latest_head(using=using)
        if head is None:
            raise ProofError(field, "No signed head yet: run audit_head, or give a tree size.")
        tree_size = head.tree_size
    if tree_size > size:
        raise ProofError(field, f"The log holds {size} events.")
    return tree_size


def _head_of(size: int, using: str) -> dict | None:
    """The stored head of this size if it verifies (one that does not is never handed out)."""
    head = AuditHead.objects.using(using).filter(tree_size=size).first()
    return head.as_json() if head and heads.head_verifies(head.as_json()) else None


def _stored(using: str):
    """The stored perfect nodes; a node missing from a damaged log is a conflict, never a 500."""
    def perfect(level: int, index: int) -> bytes:
        try:
            return stored_perfect(level, index, using=using)
        except ObjectDoesNotExist:
            raise ProofError("tree_size", "The log is damaged here (a leaf or node is missing): "
                                          "run audit_verify.") from None
    return perfect


def audit_inclusion_proof(event_id: int, tree_size: int | None = None, *, using: str = DEFAULT_DB_ALIAS) -> dict:
    """The event's entry, leaf and audit path to the root of the log's first ``tree_size`` events
    (by default the latest signed head), with the signed head of that size when there is one."""
    size, perfect = _tree_size(tree_size, "tree_size", using), _stored(using)
    leaf = AuditLeaf.objects.using(using).filter(event_id=event_id).values("index", "hash").first()
    if leaf is None:
        raise ProofError("event_id", "No such event in the log (yet: events are sequenced within a second).")
    if leaf["index"] >= size:
        raise ProofError("tree_size", f"The event is leaf {leaf['index']}: the tree size must be above it.")
    values = AuditEvent.objects.using(using).values("id", *HASHED_FIELDS).filter(pk=event_id).first()
    if values is None:
        raise ProofError("event_id", "The log is damaged here (the event of this leaf is missing): run audit_verify.")
    return {"event_id": event_id, "leaf_index": leaf["index"], "tree_size": size,
            "entry": leaf_entry(values).decode("utf-8"), "leaf_hash": leaf["hash"],
            "audit_path": [h.hex() for h in merkle.inclusion_path(leaf["index"], size, perfect)],
            "root_hash": merkle.root(size, perfect).hex(), "head": _head_of(size, using)}


def audit_consistency_proof(first: int, second: int | None = None, *, using: str = DEFAULT_DB_ALIAS) -> dict:
    """The RFC 6962 consistency proof between the log's first ``first`` and ``second`` events (by
    default the latest signed head), with both roots and the signed heads of those sizes."""
    second, perfect = _tree_size(second, "second", using), _stored(using)
    if not 0 <= first <= second:
        raise ProofError("first", f"Must be between 0 and the second tree size ({second}).")
    return {"first": first, "second": second,
            "first_root_hash": merkle.root(first, perfect).hex(),
            "second_root_hash": merkle.root(second, perfect).hex(),
            "proof": [h.hex() for h in merkle.consistency_proof(first, second, perfect)],
            "first_head": _head_of(first, using), "second_head": _head_of(second, using)}


def with_log_position(events: QuerySet[AuditEvent]) -> QuerySet[AuditEvent]:
    """Each event with its leaf index (None while pending) and the tree size of the first signed
    head that covers it (read from the database ``events`` reads from; a head that does not verify
    is passed over)."""
    forged = [head.pk for head in audit_unverified_heads(using=events.db)]
    first_head = (AuditHead.objects.using(events.db).filter(tree_size__gt=OuterRef("leaf_index"))
                  .exclude(pk__in=forged).order_by("tree_size"))
    return events.annotate(
        leaf_index=Subquery(AuditLeaf.objects.filter(event=OuterRef("pk")).values("index")[:1]),
    ).annotate(covered_by_head=Subquery(first_head.values("tree_size")[:1]))

EVENT_FILTERS = ("action", "object_type", "object_id", "request_id")


def audit_event_list(*, filters: dict | None = None, using: str = DEFAULT_DB_ALIAS) -> QuerySet[AuditEvent]:
    """Audit events, newest first. Filters (exact): ``action``, ``object_type``, ``object_id``, ``request_id``."""
    filters = filters or {}
    events = with_log_position(AuditEvent.objects.using(using).order_by("-id"))
    for name in EVENT_FILTERS:
        if filters.get(name):
            events = events.filter(**{name: filters[name]})
    return events


def with_auth_fields(events: QuerySet[AuditEvent]) -> QuerySet[AuditEvent]:
    """Auth events with what the authentication log shows of ``after``: ``outcome`` and
    ``user_agent`` (blank on events recorded before the log had them) and the whole ``username``."""
    return events.annotate(
        outcome=Coalesce(KT("after__outcome"), Value(""), output_field=TextField()),
        user_agent=Coalesce(KT("after__user_agent"), Value(""), output_field=TextField()),
        username=Coalesce(KT("after__username"), F("object_id"), output_field=TextField()),
    )


def auth_event_list(*, filters: dict | None = None, using: str = DEFAULT_DB_ALIAS) -> QuerySet[AuditEvent]:
    """The authentication log: events of AUTH_ACTIONS, newest first, with their leaf and first head
    (``with_log_position``) and ``with_auth_fields``. Filters: ``username`` (exact), ``outcome``
    (exact), ``since`` (recorded at or after it)."""
    filters = filters or {}
    events = with_auth_fields(with_log_position(
        AuditEvent.objects.using(using).filter(action__in=AUTH_ACTIONS).order_by("-id")))
    if filters.get("username"):
        events = events.filter(object_id=filters["username"][:64], username=filters["username"])
    if filters.get("outcome"):
        events = events.filter(outcome=filters["outcome"])
    if filters.get("since"):
        events = events.filter(created_at__gte=filters["since"])
    return events


def audit_chain_check(chunk_size: int = 2000, *, using: str = DEFAULT_DB_ALIAS):
    """Walk the hash chain of the events written before the Merkle log, in order; return (events
    checked, head hash, first problem or None)."""
    expected_prev = GENESIS_HASH
    checked = 0
    rows = (AuditEvent.objects.using(using).filter(hash__isnull=False).order_by("id")
            .values("id", "prev_hash", "hash", *HASHED_FIELDS))
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


def audit_pending_events(*, using: str = DEFAULT_DB_ALIAS) -> QuerySet:
    """Events the sequencer has not placed in the log yet. Only the events of the transactions it has
    not settled are looked at (by ``xact_id``, as the sequencer itself picks them), never the whole
    table: at millions of events a scan of every event for its leaf took seconds a page."""
    state = (AuditSequencerState.objects.using(using).values("horizon", "open_xacts").first()
             or {"horizon": 0, "open_xacts": []})
    unsettled = Q(xact_id__gte=state["horizon"]) | Q(xact_id__in=state["open_xacts"])
    return AuditEvent.objects.using(using).filter(unsettled, leaf__isnull=True)


def audit_pending_summary(*, using: str = DEFAULT_DB_ALIAS) -> dict:
    """The pending events for the metrics and the alert: {"count", "oldest_created_at"}."""
    return audit_pending_events(using=using).aggregate(count=Count("id"), oldest_created_at=Min("created_at"))
