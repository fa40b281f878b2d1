from celery import shared_task

from approvals.services import approvals_expire


@shared_task(name="approvals.expire")
def expire_approvals() -> int:
    return approvals_expire()
