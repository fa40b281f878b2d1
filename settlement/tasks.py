"""Celery tasks: thin wrappers that call the settlement service.

The broker is never trusted for exactly-once: a task delivered twice, or retried after a crash,
finds its rounds already SETTLED (or locked by another worker) and does nothing.
"""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from settlement.services import settlement_sweep, worker_name

RETRY_POLICY = {
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 2,
    "retry_backoff_max": 120,
    "max_retries": 6,
    "acks_late": True,
    "reject_on_worker_lost": True,
}


@shared_task(name="settlement.settle_rounds", bind=True, **RETRY_POLICY)
def settle_rounds(self, round_ids: list) -> int:
    """Settle the given rounds (those still DEALT); returns how many were settled."""
    return settlement_sweep(round_ids=round_ids, worker=_worker(self)).settled_rounds


@shared_task(name="settlement.sweep", bind=True, **RETRY_POLICY)
def sweep(self) -> int:
    """Settle every DEALT round left behind (a lost message, a crashed worker)."""
    return settlement_sweep(worker=_worker(self)).settled_rounds


def _worker(task) -> str:
    return task.request.hostname or worker_name()
