"""What the other apps' signals and Celery's add to the metrics; connected when METRICS_ENABLED.

Nothing here queries on the bet path: a bet's game and type are on the bet the endpoint answered
with (its round and game loaded by the write). The settlement lag reads each settled batch's deal and
settlement times once the batch has committed (one query a batch, in the worker).
"""

import collections
import os
import time

from celery import signals as celery_signals
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import transaction
from django.http import Http404
from rest_framework.exceptions import ValidationError as RequestValidationError

from core.errors import ApplicationError
from games.models import Bet
from games.services import BALANCE_EXCEEDED
from games.signals import bets_answered
from monitoring import metrics
from monitoring.multiprocess import remove_dead_files
from settlement.models import SettlementBatch
from settlement.selectors import round_settlement_times
from settlement.signals import batch_failed, rounds_settled

# A refusal names the field at fault only among these (a label's values must stay few).
BET_FIELDS = frozenset({"account", "bet_type", "stake", "idempotency_key"})


def refusal_reason(error: Exception) -> str:
    """A short, stable reason for an error that refused a bet: the conflict's code (round_not_open,
    game_inactive, idempotency_key_reused, busy), insufficient_balance, invalid_<field>, round_not_found,
    or error."""
    if isinstance(error, ApplicationError):
        return error.code
    if isinstance(error, Http404 | ObjectDoesNotExist):
        return "round_not_found"
    if isinstance(error, ValidationError) and hasattr(error, "error_dict"):
        field, errors = next(iter(error.error_dict.items()))
        if errors and errors[0].code == BALANCE_EXCEEDED:
            return BALANCE_EXCEEDED
    elif isinstance(error, RequestValidationError) and isinstance(error.detail, dict) and error.detail:
        field = next(iter(error.detail))
    else:
        return "error"
    return f"invalid_{field}" if field in BET_FIELDS else "invalid"


def count_bets(sender, accepted=(), refused=(), bulk_size=None, **kwargs) -> None:
    if bulk_size is None and len(accepted) == 1:  # a single bet, the hot path
        bet = accepted[0]
        metrics.PENDING.inc(metrics.BETS_ACCEPTED, (bet.round.game.slug, bet.bet_type))
        return
    for labels, count in collections.Counter((bet.round.game.slug, bet.bet_type) for bet in accepted).items():
        metrics.PENDING.inc(metrics.BETS_ACCEPTED, labels, count)
    for reason, count in collections.Counter(map(refusal_reason, refused)).items():
        metrics.PENDING.inc(metrics.BETS_REFUSED, (reason,), count)
    if bulk_size is not None:
        metrics.PENDING.observe(metrics.BULK_SIZE, (), bulk_size)


def observe_settlement(sender, round_ids, **kwargs) -> None:
    """Once the batch has committed: its outcome, and each round's lag from deal to settlement."""
    def committed():
        metrics.SETTLEMENT_BATCHES.labels("ok").inc()
        for dealt_at, settled_at in round_settlement_times(round_ids):
            metrics.SETTLEMENT_LAG.observe(max(0.0, (settled_at - dealt_at).total_seconds()))
    transaction.on_commit(committed)


def count_failed_batch(sender, **kwargs) -> None:
    metrics.SETTLEMENT_BATCHES.labels("failed").inc()


# Celery: the start of each task run in this process, by task id.
_task_started: dict = {}


def _queue(task) -> str:
    info = task.request.delivery_info or {}
    return info.get("routing_key") or ("eager" if task.request.is_eager else "unknown")


def task_started(task_id=None, **kwargs) -> None:
    _task_started[task_id] = time.perf_counter()


def task_finished(task_id=None, task=None, **kwargs) -> None:
    started = _task_started.pop(task_id, None)
    if started is not None and task is not None:
        metrics.TASK_DURATION.labels(task.name, _queue(task)).observe(time.perf_counter() - started)


def task_failed(sender=None, **kwargs) -> None:
    if sender is not None:
        metrics.TASK_FAILURES.labels(sender.name, _queue(sender)).inc()


def worker_starting(**kwargs) -> None:
    """A Celery worker starting on a host whose processes share PROMETHEUS_MULTIPROC_DIR."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        remove_dead_files(directory)


def connect() -> None:
    bets_answered.connect(count_bets, sender=Bet, dispatch_uid="monitoring.count_bets")
    rounds_settled.connect(observe_settlement, sender=SettlementBatch, dispatch_uid="monitoring.settlement")
    batch_failed.connect(count_failed_batch, sender=SettlementBatch, dispatch_uid="monitoring.failed_batch")
    celery_signals.task_prerun.connect(task_started, dispatch_uid="monitoring.task_started")
    celery_signals.task_postrun.connect(task_finished, dispatch_uid="monitoring.task_finished")
    celery_signals.task_failure.connect(task_failed, dispatch_uid="monitoring.task_failed")
    celery_signals.worker_init.connect(worker_starting, dispatch_uid="monitoring.worker_starting")
