"""The settlement of dealt rounds in batches, exactly once, by any number of workers at once."""

import logging
import os
import re
import socket
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from audit.choices import AuditAction
from audit.services import audit_record
from audit.validators import required_reason
from games import locks
from games.choices import STATUS_BY_SETTLEMENT_KIND, BetStatus, RoundStatus
from games.engine import bet_return, settlement_kind
from games.errors import Conflict
from games.models import Bet, Round
from settlement import aggregates, writes
from settlement.models import SettlementBatch
from settlement.signals import held_bet_settled, rounds_settled, sweep_requested

logger = logging.getLogger(__name__)

HOLD_REASON_LENGTH = 500
_SEED_LIKE = re.compile(r"[0-9A-Fa-f]{64}")


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
    settle. A round that fails alone is then settled bet by bet (``round_settle_bet_by_bet``): a bet
    whose writes fail is HELD for an operator and the others are paid. Only when that fails too is
    the round's failure recorded; a round that failed ``settings.MAX_SETTLEMENT_FAILURES`` times is
    left to an operator. Errors of the database connection itself are raised after recording, so
    the task retries.
    """
    worker = worker or worker_name()
    result = SweepResult()
    while True:
        claimed: list = []
        try:
            batch = settlement_run(round_ids=round_ids, worker=worker, claimed=claimed)
        except Exception as error:  # noqa: BLE001 - every failure is recorded, then handled below
            if len(claimed) == 1 and not _connection_error(error):
                _settle_bet_by_bet(claimed[0], error, worker, result)
            else:
                _failed(claimed, error, worker, result)
                for round_id in claimed:
                    _settle_alone(round_id, worker, result)
            if round_ids is not None:
                return result
            continue
        if batch is None:
            return result
        _counted(batch, result)


def _connection_error(error: Exception) -> bool:
    return isinstance(error, (OperationalError, InterfaceError))


def _counted(batch, result: SweepResult) -> None:
    if batch is not None:
        result.settled_rounds += batch.rounds
        result.batches += 1


def _failed(round_ids: list, error: Exception, worker: str, result: SweepResult) -> None:
    """Record the failure; an error of the connection itself is raised again, so the task retries."""
    _record_failure(round_ids, error, worker)
    if _connection_error(error):
        raise error
    result.failed_batches += 1


def _settle_alone(round_id: int, worker: str, result: SweepResult) -> None:
    claimed: list = []
    try:
        batch = settlement_run(round_ids=[round_id], worker=worker, claimed=claimed)
    except Exception as error:  # noqa: BLE001
        if claimed and not _connection_error(error):
            _settle_bet_by_bet(round_id, error, worker, result)
        else:
            _failed(claimed, error, worker, result)
        return
    _counted(batch, result)


def _settle_bet_by_bet(round_id: int, cause: Exception, worker: str, result: SweepResult) -> None:
    """The round failed alone: settle it bet by bet; if even that fails, record today's failure."""
    try:
        batch = round_settle_bet_by_bet(round_id=round_id, worker=worker, cause=cause)
    except Exception as error:  # noqa: BLE001
        _failed([round_id], error, worker, result)
        return
    _counted(batch, result)


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
    batch = SettlementBatch.objects.create(
        worker=worker, started_at=started, finished_at=timezone.now(), rounds=len(outcome_by_round),
        bets=len(bets), total_staked=total_staked, total_paid=total_paid, round_ids=sorted(outcome_by_round),
        outcome=SettlementBatch.Outcome.OK,
    )
    audit_record(actor=f"system:{worker}", action=AuditAction.ROUNDS_SETTLED, obj=batch,
                 after={"rounds": batch.round_ids, "bets": len(bets), "total_staked": str(total_staked),
                        "total_paid": str(total_paid)})
    rounds_settled.send(sender=SettlementBatch, round_ids=batch.round_ids)
    # Last: every batch of a game and day adds to the same aggregate rows, and holds them until it
    # commits, so it takes them only when nothing is left to do but commit.
    aggregates.record_settled_rounds(outcome_by_round)
    return batch


def hold_reason(error: Exception) -> str:
    """Why a bet's writes failed, for operators: the error's class and first line, trimmed. Anything
    that looks like a seed (64 hex digits) is blanked out, whatever the database put in its message."""
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    text = _SEED_LIKE.sub("[…]", f"{type(error).__name__}: {message}".rstrip(": "))
    return text[:HOLD_REASON_LENGTH]


def _bet_writes(bet_id: int, account_id: int, status: str, returned: Decimal, balance: Decimal, *, at,
                from_status: str = BetStatus.PENDING) -> None:
    """One bet's settlement writes, in a savepoint of their own: all of them, or none."""
    with transaction.atomic():
        writes.settle_bets([(bet_id, status, returned)], settled_at=at, from_status=from_status)
        if returned:
            writes.post_payouts([(account_id, bet_id, returned, balance + returned)], created_at=at)
            writes.set_balances({account_id: balance + returned})


@transaction.atomic
def round_settle_bet_by_bet(*, round_id: int, worker: str | None = None, cause: Exception | None = None):
    """Settle one DEALT round bet by bet in one transaction; None when it is no longer DEALT.

    For a round that already failed settlement alone. Each bet's writes run in a savepoint: a bet
    whose writes fail is rolled back to it and HELD (its reason and time recorded), the others are
    settled and paid exactly as a batch would (the same writes, ledger entries and aggregates),
    and the round is SETTLED: its outcome is final and a held bet is an open item for an operator
    (``held_bet_settle``), not a reason to hold the other players' money.
    """
    worker = worker or worker_name()
    outcome_by_round = dict(locks.lock_dealt_rounds([round_id], 1, settings.MAX_SETTLEMENT_FAILURES))
    if round_id not in outcome_by_round:
        return None
    outcome = outcome_by_round[round_id]
    started = timezone.now()
    bets = list(
        Bet.objects.filter(round_id=round_id, status=BetStatus.PENDING)
        .order_by("pk").values_list("pk", "account_id", "bet_type", "stake", "multiplier")
    )
    balances = locks.lock_account_balances({bet[1] for bet in bets})
    total_staked = total_paid = Decimal(0)
    held = {}  # bet id: reason
    for bet_id, account_id, bet_type, stake, multiplier in bets:
        returned = bet_return(bet_type, stake, outcome, multiplier)
        status = STATUS_BY_SETTLEMENT_KIND[settlement_kind(bet_type, outcome)]
        try:
            _bet_writes(bet_id, account_id, status, returned, balances[account_id], at=started)
        except Exception as error:  # noqa: BLE001 - the bet is held with the error as its reason
            if _connection_error(error):
                raise  # no savepoint survives a lost connection
            held[bet_id] = hold_reason(error)
            continue
        balances[account_id] += returned
        total_staked += stake
        total_paid += returned
    for bet_id, reason in held.items():
        Bet.objects.filter(pk=bet_id, status=BetStatus.PENDING).update(
            status=BetStatus.HELD, hold_reason=reason, held_at=started)
    Round.objects.filter(pk=round_id).update(status=RoundStatus.SETTLED, settled_at=started)
    aggregates.record_settled_rounds([round_id])  # held bets count nowhere until resolved
    note = f"Settled bet by bet after: {hold_reason(cause)}" if cause is not None else "Settled bet by bet."
    if held:
        note += f" Held bets: {', '.join(map(str, held))}."
    batch = SettlementBatch.objects.create(
        worker=worker, started_at=started, finished_at=timezone.now(), rounds=1, bets=len(bets) - len(held),
        total_staked=total_staked, total_paid=total_paid, round_ids=[round_id],
        outcome=SettlementBatch.Outcome.OK, error=note,
    )
    actor = f"system:{worker}"
    audit_record(actor=actor, action=AuditAction.ROUNDS_SETTLED, obj=batch,
                 after={"rounds": batch.round_ids, "bets": batch.bets, "total_staked": str(total_staked),
                        "total_paid": str(total_paid), "bet_by_bet": True, "held_bets": list(held)})
    if held:
        audit_record(actor=actor, action=AuditAction.BETS_HELD, object_type="round", object_id=str(round_id),
                     after={"round": round_id, "held": {str(bet_id): reason for bet_id, reason in held.items()}})
    rounds_settled.send(sender=SettlementBatch, round_ids=batch.round_ids)
    return batch


def held_bet_settle(*, bet_id: int, actor, reason: str) -> Bet:
    """An operator settles a HELD bet at its round's outcome, with its own multiplier; paid once.

    Bet.DoesNotExist when there is no such bet; a Conflict (409) when it is not HELD (someone settled
    it first: the round's row lock orders two operators, and the ledger's unique (bet, kind) stands
    behind it), or when its writes fail again: it then stays HELD with the new reason, recorded.
    """
    reason = required_reason(reason)
    failure = _held_bet_try(bet_id=bet_id, actor=actor, reason=reason)
    if isinstance(failure, str):
        raise Conflict("status", f"Bet {bet_id} is still held: {failure}", code="held")
    return failure


@transaction.atomic
def _held_bet_try(*, bet_id: int, actor, reason: str):
    """The settled bet, or the reason its writes failed again (committed with the bet still HELD)."""
    round_id, account_id = Bet.objects.filter(pk=bet_id).values_list("round_id", "account_id").get()
    round_ = locks.lock_round(round_id)  # a bet's status changes only under its round's lock
    balance = locks.lock_account_balances([account_id])[account_id]
    bet = Bet.objects.get(pk=bet_id)
    if bet.status != BetStatus.HELD:
        raise Conflict("status", f"Bet {bet_id} is {bet.get_status_display().lower()}, not held.", code="not_held")
    returned = bet_return(bet.bet_type, bet.stake, round_.outcome, bet.multiplier)
    status = STATUS_BY_SETTLEMENT_KIND[settlement_kind(bet.bet_type, round_.outcome)]
    now = timezone.now()
    try:
        _bet_writes(bet_id, account_id, status, returned, balance, at=now, from_status=BetStatus.HELD)
    except Exception as error:  # noqa: BLE001 - the bet stays held, with the new reason
        if _connection_error(error):
            raise
        failure = hold_reason(error)
        Bet.objects.filter(pk=bet_id).update(hold_reason=failure)
        audit_record(actor=actor, action=AuditAction.BETS_HELD, obj=bet, reason=reason,
                     before={"hold_reason": bet.hold_reason}, after={"round": round_id, "hold_reason": failure})
        return failure
    aggregates.record_resolved_bets([bet_id])  # counted now, as if settled with its round
    bet.refresh_from_db()
    audit_record(actor=actor, action=AuditAction.HELD_BET_SETTLED, obj=bet, reason=reason,
                 before={"status": BetStatus.HELD, "hold_reason": bet.hold_reason},
                 after={"status": bet.status, "payout": str(bet.payout), "round": round_id,
                        "outcome": round_.outcome})
    held_bet_settled.send(sender=Bet, bet=bet)
    return bet


@transaction.atomic
def sweep_request(*, actor) -> None:
    """Ask the workers for a sweep now (an operator's button, the API); it runs once committed."""
    audit_record(actor=actor, action=AuditAction.SWEEP_REQUESTED, object_type="settlement", object_id="queue")
    transaction.on_commit(lambda: sweep_requested.send(sender=SettlementBatch))
