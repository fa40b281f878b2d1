"""Celery beat runs these (schedules from audit's migration): the sequencer every second, a
signed head every minute."""

from celery import shared_task

from audit.services import audit_head_sign, audit_sequence


@shared_task(name="audit.sequence")
def sequence() -> int:
    return audit_sequence()


@shared_task(name="audit.sign_head")
def sign_head() -> int:
    return audit_head_sign().tree_size
