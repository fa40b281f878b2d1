"""Four-eyes approval: holding a request, then applying, rejecting or expiring it.

A held request is validated in full first by running its service in a transaction that is rolled
back (the same checks as when it runs for real; nothing is written, no side effect is enqueued).
Approving calls the service again inside the approval's transaction, against the state of that
moment: if it no longer applies, or a field it changes no longer holds the value it was proposed
against, nothing changes and the answer is a Conflict. The approver needs the permission of the action
itself as well as "approve": approving must not let anyone apply what they could not do directly.

Whether a request needs a second person is decided under the locks of what the decision reads
(approvals.actions.lock_for), and a request that needs nobody runs in that same transaction
(approval_submit): a void decided on an OPEN round cannot void the round a deal commits meanwhile.
"""

from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from approvals import locks
from approvals.actions import KINDS, kind_needing_approval, kinds_enabled, lock_for
from approvals.choices import ApprovalStatus
from approvals.models import Approval
from audit.choices import AuditAction
from audit.services import audit_record
from audit.validators import required_reason
from core.errors import Conflict

SYSTEM_ACTOR = "system:approvals"


class _DryRunDone(Exception):
    """Raised to roll back a dry run that went through."""


def _dry_run(service, **kwargs) -> None:
    try:
        with transaction.atomic():
            service(**kwargs)
            raise _DryRunDone
    except _DryRunDone:
        pass


def approval_submit(service, *, actor, reason, **arguments):
    """Hold this call of ``service`` for a second person when it needs one, else run it now:
    (pending approval, None) or (None, what the service returned). One transaction: the decision's
    locks are held until the service has run (or the request is stored)."""
    if not kinds_enabled(service):
        return None, service(actor=actor, reason=reason, **arguments)
    with transaction.atomic():
        approval = approval_gate(service, actor=actor, reason=reason, **arguments)
        if approval is not None:
            return approval, None
        return None, service(actor=actor, reason=reason, **arguments)


def approval_gate(service, *, actor, reason, **arguments) -> Approval | None:
    """A pending approval when this call of ``service`` needs a second person; None when it may run now
    (decided under the locks of what the decision reads, which the caller's transaction keeps)."""
    with transaction.atomic():
        lock_for(service, arguments)
        kind = kind_needing_approval(service, arguments)
        if kind is None:
            return None
        _dry_run(service, actor=actor, reason=reason, **arguments)  # raises what the service would raise
        reason = required_reason(reason)
        now = timezone.now()
        approval = Approval.objects.create(
            action=kind.action, object_type=kind.object_type, object_id=kind.object_id(arguments),
            object_name=kind.object_name(arguments),
            payload=kind.payload(arguments), changes=kind.changes(arguments), reason=reason,
            proposed_by=actor, proposed_at=now, expires_at=now + timedelta(hours=settings.APPROVAL_EXPIRY_HOURS),
        )
        audit_record(actor=actor, action=AuditAction.APPROVAL_REQUESTED, obj=approval,
                     after={"action": approval.action, "object_type": approval.object_type,
                            "object_id": approval.object_id, "changes": approval.changes}, reason=reason)
    return approval


def _decidable(approval: Approval) -> None:
    if approval.status != ApprovalStatus.PENDING:
        raise Conflict("approval", f"The request is {approval.status}; only a pending one can be decided.",
                       code=f"approval_{approval.status}")


def _decide(approval: Approval, *, actor, status: str, reason: str, audit_action: str, after=None) -> None:
    approval.status = status
    approval.decided_by = actor
    approval.decided_at = timezone.now()
    approval.decision_reason = reason
    approval.save(update_fields=["status", "decided_by", "decided_at", "decision_reason"])
    audit_record(actor=actor, action=audit_action, obj=approval, before={"status": ApprovalStatus.PENDING},
                 after={"status": status, **(after or {})}, reason=reason)


def approval_approve(*, approval_id: int, actor, reason: str):
    """Apply the request as the second person. Returns (approval, what the service returned)."""
    reason = required_reason(reason)
    approvals_expire(approval_id=approval_id)
    with transaction.atomic():
        approval = locks.lock_approval(approval_id)
        _decidable(approval)
        if approval.proposed_by_id == actor.pk:
            raise PermissionDenied("The person who proposed a request cannot approve it: a second person must.")
        kind = KINDS[approval.action]
        if not actor.has_perm(kind.permission):
            raise PermissionDenied(f"Approving a {approval.get_action_display().lower()} needs the permission to "
                                   f"apply it yourself ({kind.permission}), which you do not hold.")
        try:
            with transaction.atomic():
                arguments = kind.arguments(approval.payload)
                kind.lock(arguments)
                _check_not_moved(approval, kind, arguments)
                result = kind.service(**arguments, actor=actor,
                                      reason=f"{approval.reason} (approval #{approval.pk}, proposed by "
                                             f"{approval.proposed_by.get_username()})")
        except (ValidationError, Conflict, ObjectDoesNotExist) as error:
            if isinstance(error, Moved):
                raise
            raise Conflict("approval", f"The request no longer applies: {_error_text(error)}",
                           code="approval_no_longer_applies") from None
        if not approval.object_id:  # a new game: its id, now that it exists
            approval.object_id = str(result.pk)
            approval.save(update_fields=["object_id"])
        _decide(approval, actor=actor, status=ApprovalStatus.APPLIED, reason=reason,
                audit_action=AuditAction.APPROVAL_APPLIED)
        return approval, result


class Moved(Conflict):
    """Fields the request changes hold other values than those it was proposed against (409 naming each)."""

    def __init__(self, moved: dict):
        super().__init__("approval", f"The request no longer applies: {', '.join(moved)} changed since it was "
                                     "proposed.", code="approval_stale")
        self.moved = moved

    @property
    def message_dict(self) -> dict:
        return {"approval": [self.message], **{name: [why] for name, why in self.moved.items()}}


def _check_not_moved(approval: Approval, kind, arguments: dict) -> None:
    """Refuse to apply over newer state: each field the request changes must still hold the value it
    was proposed against (read under the kind's lock), or a change made since would be overwritten."""
    moved = kind.moved(approval.changes, arguments) if kind.moved is not None else {}
    if moved:
        raise Moved(moved)


@transaction.atomic
def approval_reject(*, approval_id: int, actor, reason: str) -> Approval:
    """Refuse the request (its proposer may withdraw it this way too); nothing of it takes effect."""
    reason = required_reason(reason)
    approval = locks.lock_approval(approval_id)
    if approval.current_status == ApprovalStatus.EXPIRED:
        _expire(approval)
    _decidable(approval)
    _decide(approval, actor=actor, status=ApprovalStatus.REJECTED, reason=reason,
            audit_action=AuditAction.APPROVAL_REJECTED)
    return approval


def _expire(approval: Approval) -> None:
    approval.status = ApprovalStatus.EXPIRED
    approval.decided_at = approval.expires_at
    approval.save(update_fields=["status", "decided_at"])
    audit_record(actor=SYSTEM_ACTOR, action=AuditAction.APPROVAL_EXPIRED, obj=approval,
                 before={"status": ApprovalStatus.PENDING}, after={"status": ApprovalStatus.EXPIRED})


def approvals_expire(*, approval_id: int | None = None) -> int:
    """Mark pending requests past their expiry as expired (all of them, or the one named). Returns how many."""
    due = Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__lte=timezone.now())
    if approval_id is not None:
        due = due.filter(pk=approval_id)
    expired = 0
    for pk in due.order_by("pk").values_list("pk", flat=True):
        with transaction.atomic():
            approval = locks.lock_approval(pk)
            if approval.current_status == ApprovalStatus.EXPIRED and approval.status == ApprovalStatus.PENDING:
                _expire(approval)
                expired += 1
    return expired


def _error_text(error) -> str:
    messages = getattr(error, "message_dict", None)
    if messages:
        return " ".join(f"{field}: {' '.join(map(str, texts))}" for field, texts in messages.items())
    return " ".join(getattr(error, "messages", None) or [str(error) or type(error).__name__])
