"""A task carries the context of the request (or task) that enqueued it, its request id, user,
game, round and bet, in a message header; the worker runs it in that context, so the worker's log
lines and the audit events the task writes name the request that dealt the round.

Tasks run in-process (no broker) are left alone: they run in their caller's context already.
"""

from celery import signals

from audit.context import log_fields, task_context_end, task_context_start

HEADER = "baccarat_context"


def _carry(sender=None, headers=None, **kwargs) -> None:
    fields = log_fields()
    if fields and headers is not None:
        headers[HEADER] = fields


def _enter(sender=None, task=None, **kwargs) -> None:
    if task is not None and not task.request.is_eager:
        task_context_start(getattr(task.request, HEADER, None))


def _leave(sender=None, task=None, **kwargs) -> None:
    if task is not None and not task.request.is_eager:
        task_context_end()


def connect() -> None:
    signals.before_task_publish.connect(_carry, weak=False, dispatch_uid="audit.task_context.carry")
    signals.task_prerun.connect(_enter, weak=False, dispatch_uid="audit.task_context.enter")
    signals.task_postrun.connect(_leave, weak=False, dispatch_uid="audit.task_context.leave")
