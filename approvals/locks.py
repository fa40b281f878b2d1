"""The approval's row lock: taken first, before any lock of games/locks.py that applying takes."""

from approvals.models import Approval


def lock_approval(approval_id: int) -> Approval:
    return Approval.objects.select_for_update().select_related("proposed_by").get(pk=approval_id)
