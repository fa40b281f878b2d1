"""Celery beat runs these (schedules from audit's migrations): the sequencer every second, a
signed head every minute, the partitions of the months ahead every day."""

from celery import shared_task
from django.conf import settings

from audit.partitioning import partitions_ensure
from audit.services import audit_head_sign, audit_sequence


@shared_task(name="audit.sequence")
def sequence() -> int:
    return audit_sequence()


@shared_task(name="audit.sign_head")
def sign_head() -> int:
    return audit_head_sign().tree_size


@shared_task(name="audit.partitions_ensure")
def ensure_partitions() -> list:
    """As the tables' owner (PARTITIONS_DATABASE_URL): the application role cannot attach."""
    return partitions_ensure(using=settings.PARTITIONS_DATABASE)
