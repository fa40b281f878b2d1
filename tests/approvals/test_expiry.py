"""Pending requests expire after APPROVAL_EXPIRY_HOURS (the beat task), once each."""

from datetime import timedelta

import pytest
from django.utils import timezone

from approvals import services
from approvals.models import Approval
from approvals.tasks import expire_approvals
from audit.models import AuditEvent
from wallet import services as wallet_services

pytestmark = pytest.mark.django_db


def test_the_periodic_task_expires_what_is_due_once(operator, funded_account, settings):
    funded_account("whale", "0")
    settings.APPROVAL_EXPIRY_HOURS = 1
    due, fresh = (services.approval_gate(wallet_services.account_adjust, external_id="whale", actor=operator,
                                         amount="20000.00", reason=reason) for reason in ("a", "b"))
    assert fresh.expires_at - fresh.proposed_at == timedelta(hours=1)
    Approval.objects.filter(pk=due.pk).update(proposed_at=timezone.now() - timedelta(hours=2),
                                              expires_at=timezone.now() - timedelta(hours=1))
    assert expire_approvals.delay().get() == 1
    assert expire_approvals.delay().get() == 0
    assert dict(Approval.objects.values_list("pk", "status")) == {due.pk: "expired", fresh.pk: "pending"}
    assert AuditEvent.objects.filter(action="approval.expired", object_id=str(due.pk)).count() == 1


def test_the_beat_schedule_exists():
    from django_celery_beat.models import PeriodicTask

    assert PeriodicTask.objects.get(task="approvals.expire").enabled
