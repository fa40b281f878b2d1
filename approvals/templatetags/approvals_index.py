"""The admin index's count of requests waiting for a second person (templates/admin/index.html)."""

from django import template

from approvals import selectors

register = template.Library()


@register.simple_tag
def pending_approvals_count(user) -> int | None:
    """How many requests wait for a second person; None for someone who may not see the queue."""
    if not user.has_perm("approvals.view_approval"):
        return None
    return selectors.approvals_pending_count()
