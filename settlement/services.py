"""The settlement of dealt rounds in batches, exactly once, by any number of workers at once."""

import logging
import os
import socket
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from audit.choices import AuditAction
from audit.services import audit_record
from games import locks
from games.choices import STATUS_BY_SETTLEMENT_KIND, BetStatus, RoundStatus
from games.engine import bet_return, settlement_kind
from games.models import Bet, Round
from settlement import aggregates, writes
from settlement.models import SettlementBatch
from settlement.signals import rounds_settled, sweep_requested

logger = logging.getLogger(__name__)



def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class SweepResult:
    batches: int = 0
    settled_rounds: int = 0
    failed_batches: int = 0


def settlement_sweep(*, round_ids=None, worker: str | None = None) -> SweepResult:
    """Settle DEALT rounds batch after batch until none is left; safe to run anywhere, any time.

    A batch that fails is recorded as failed and its rounds are counted as failed attempts; when
    it held several rounds, each is then tried alone, so one bad round fails alone and the rest
    settle. A round that failed ``settings.MAX_SETTLEMENT_FAILURES`` times is left to an operator.
    Errors of the database connection itself are raised after recording, so the task retries.
    """
    worker = worker or worker_name()
    result = SweepResult()
    while True:
        claimed: list = []
        try:
            batch = settlement_run(round_ids=round_ids, worker=worker, claimed=claimed)
        except Exception as error:  # noqa: BLE001 - every failure is recorded, then handled below
            _record_failure(claimed, error, worker)
            if isinstance(error, (OperationalError, InterfaceError)):
                raise
            result.failed_batches += 1
            if len(claimed) > 1:
                for round_id in claimed:
                    _settle_alone(round_id, worker, result)
            if round_ids is not None:
                return result
            continue
        if batch is None:
            return result
        result.settled_rounds += batch.rounds
        result.batches += 1


def _settle_alone(round_id: int, worker: str, result: SweepResult) -> None:
    claimed: list = []
    try:
        batch = settlement_run(round_ids=[round_id], worker=worker, claimed=claimed)
    except Exception as error:  # noqa: BLE001
        _record_failure(claimed, error, worker)
        if isinstance(error, (OperationalError, InterfaceError)):
            raise
        result.failed_batches += 1
        return
    if batch is not None:
        result.settled_rounds += batch.rounds
        result.batches += 1


def _record_failure(round_ids: list, error: Exception, worker: str) -> None:
    """In a transaction of its own (the batch's was rolled back): a failed batch, for operators."""
    if not round_ids:
        return
    if not connection.is_usable():
        connection.close()  # the next query reconnects
    try:
        with transaction.atomic():
            now = timezone.now()
            SettlementBatch.objects.create(
                worker=worker, started_at=now, finished_at=now, rounds=len(round_ids), round_ids=sorted(round_ids),
                outcome=SettlementBatch.Outcome.FAILED, error=f"{type(error).__name__}: {error}"[:2000],
            )
            Round.objects.filter(pk__in=round_ids).update(settlement_failures=F("settlement_failures") + 1)
    except (OperationalError, InterfaceError):
        logger.exception("could not record the failed settlement batch of rounds %s", round_ids)


@transaction.atomic
def settlement_run(*, round_ids=None, limit: int | None = None, worker: str | None = None,
                   claimed: list | None = None):
    """Settle up to ``limit`` DEALT rounds in one transaction; None when there is nothing to claim.

    Rounds are claimed with row locks that skip rounds another worker holds, so any number of
    workers (and sweeps) can run at once: a bet's status only changes under its round's lock, the
    bet update only touches PENDING bets, and the ledger's unique (bet, kind) stops any payout from
    being written twice. The writes are set-based: a handful of statements per batch.
    """
    worker = worker or worker_name()
    limit = limit or settings.SETTLEMENT_BATCH_ROUNDS
    outcome_by_round = dict(locks.lock_dealt_rounds(round_ids, limit, settings.MAX_SETTLEMENT_FAILURES))
    if claimed is not None:
        claimed.extend(outcome_by_round)
    if not outcome_by_round:
        return None
    started = timezone.now()
    bets = list(
        Bet.objects.filter(round_id__in=outcome_by_round, status=BetStatus.PENDING)
        .order_by("pk").values_list("pk", "round_id", "account_id", "bet_type", "stake", "multiplier")
    )
    balances = locks.lock_account_balances({bet[2] for bet in bets})
    total_staked = Decimal(0)
    total_paid = Decimal(0)
    settled = []   # (bet id, status, payout)
    payouts = []   # (account id, bet id, amount, balance after)
    for bet_id, round_id, account_id, bet_type, stake, multiplier in bets:
        outcome = outcome_by_round[round_id]
        # The bet's own multiplier, the one in force when it was accepted, settles it.
        returned = bet_return(bet_type, stake, outcome, multiplier)
        settled.append((bet_id, STATUS_BY_SETTLEMENT_KIND[settlement_kind(bet_type, outcome)], returned))
        total_staked += stake
        total_paid += returned
        if returned:
            balances[account_id] += returned
            payouts.append((account_id, bet_id, returned, balances[account_id]))
    credited = {account_id: balances[account_id] for account_id, *_rest in payouts}
    writes.settle_bets(settled, settled_at=started)
    writes.post_payouts(payouts, created_at=started)
    writes.set_balances(credited)
    Round.objects.filter(pk__in=outcome_by_round).update(status=RoundStatus.SETTLED, settled_at=started)
    aggregates.record_settled_rounds(outcome_by_round)
    batch = SettlementBatch.objects.create(
        worker=worker, started_at=started, finished_at=timezone.now(), rounds=len(outcome_by_round),
        bets=len(bets), total_staked=total_staked, total_paid=total_paid, round_ids=sorted(outcome_by_round),
        outcome=SettlementBatch.Outcome.OK,
    )
    audit_record(actor=f"system:{worker}", action=AuditAction.ROUNDS_SETTLED, obj=batch,
                 after={"rounds": batch.round_ids, "bets": len(bets), "total_staked": str(total_staked),
                        "total_paid": str(total_paid)})
    rounds_settled.send(sender=SettlementBatch, round_ids=batch.round_ids)
    return batch


@transaction.atomic
def sweep_request(*, actor) -> None:
    """Ask the workers for a sweep now (an operator's button, the API); it runs once committed."""
    audit_record(actor=actor, action=AuditAction.SWEEP_REQUESTED, object_type="settlement", object_id="queue")
    transaction.on_commit(lambda: sweep_requested.send(sender=SettlementBatch))
