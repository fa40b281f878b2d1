"""Reading approvals: the queue and its filters (a pending request past its expiry counts as expired)."""

from django.db import DEFAULT_DB_ALIAS
from django.db.models import Q, QuerySet
from django.utils import timezone

from approvals.choices import ApprovalStatus
from approvals.models import Approval


def _status_q(status: str) -> Q:
    now = timezone.now()
    if status == ApprovalStatus.PENDING:
        return Q(status=ApprovalStatus.PENDING, expires_at__gt=now)
    if status == ApprovalStatus.EXPIRED:
        return Q(status=ApprovalStatus.EXPIRED) | Q(status=ApprovalStatus.PENDING, expires_at__lte=now)
    return Q(status=status)


def approval_list(*, filters: dict, using: str = DEFAULT_DB_ALIAS) -> QuerySet:
    approvals = Approval.objects.using(using).select_related("proposed_by", "decided_by")
    if filters.get("status"):
        approvals = approvals.filter(_status_q(filters["status"]))
    if filters.get("action"):
        approvals = approvals.filter(action=filters["action"])
    if filters.get("object_type"):
        approvals = approvals.filter(object_type=filters["object_type"])
    if filters.get("object_id"):
        approvals = approvals.filter(object_id=filters["object_id"])
    return approvals


def approval_get(*, approval_id: int, using: str = DEFAULT_DB_ALIAS) -> Approval:
    return Approval.objects.using(using).select_related("proposed_by", "decided_by").get(pk=approval_id)


def approvals_pending_count(*, using: str = DEFAULT_DB_ALIAS) -> int:
    """Requests waiting for a second person (not yet expired), for the metrics."""
    return Approval.objects.using(using).filter(_status_q(ApprovalStatus.PENDING)).count()
