"""Money: accounts, adjustments, the ledger, and the settlement of dealt rounds in batches."""

import logging
import os
import socket
from dataclasses import dataclass
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from games import locks
from games.audit import audit_record
from games.choices import BetStatus, RoundStatus
from games.engine import bet_return, settlement_kind
from games.models import Bet, Round
from games.validators import MONEY_DECIMAL_PLACES
from settlement.choices import LedgerKind
from settlement import aggregates, writes
from settlement.models import Account, LedgerEntry, SettlementBatch

logger = logging.getLogger(__name__)

SETTLEMENT_BATCH_ROUNDS = int(os.environ.get("SETTLEMENT_BATCH_ROUNDS", "200"))
MAX_SETTLEMENT_FAILURES = int(os.environ.get("MAX_SETTLEMENT_FAILURES", "5"))

# What a settled bet's status is, by the engine's settlement kind.
_STATUS_BY_KIND = {"WIN": BetStatus.WON, "LOSE": BetStatus.LOST, "PUSH": BetStatus.PUSH}


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def ledger_post(*, account: Account, bet, kind: str, amount: Decimal, reason: str = "") -> LedgerEntry:
    """Move money on a locked account: the balance and its ledger entry change together."""
    account.balance += amount
    if account.balance < 0:
        raise ValidationError({"amount": "The balance would go below zero."})
    account.save(update_fields=["balance"])
    return LedgerEntry.objects.create(account=account, bet=bet, kind=kind, amount=amount,
                                      balance_after=account.balance, reason=reason)


def account_create(*, actor, external_id: str, currency: str = "USD") -> Account:
    try:
        with transaction.atomic():
            account = Account(external_id=external_id, currency=currency)
            account.full_clean()
            account.save()
            audit_record(actor=actor, action="account.created", obj=account,
                         after={"external_id": external_id, "currency": currency})
            return account
    except IntegrityError:
        # Two requests created the same account at once; the database kept one.
        if Account.objects.filter(external_id=external_id).exists():
            raise ValidationError({"external_id": "Account with this External id already exists."}) from None
        raise


def _parse_amount(amount) -> Decimal:
    if isinstance(amount, (float, bool)):
        raise ValidationError({"amount": "Send the amount as a decimal string."})
    try:
        value = Decimal(str(amount))
    except ArithmeticError:
        raise ValidationError({"amount": "Must be a decimal number."}) from None
    if not value.is_finite() or value == 0:
        raise ValidationError({"amount": "Must be a non-zero finite number."})
    if value.as_tuple().exponent < -MONEY_DECIMAL_PLACES:
        raise ValidationError({"amount": f"Must have at most {MONEY_DECIMAL_PLACES} decimal places."})
    return value


@transaction.atomic
def account_adjust(*, external_id: str, actor, amount, reason: str) -> LedgerEntry:
    """Credit (positive) or debit (negative) an account by hand, with a reason."""
    amount = _parse_amount(amount)
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": "A reason is required."})
    account_id = Account.objects.filter(external_id=external_id).values_list("pk", flat=True).first()
    if account_id is None:
        raise Account.DoesNotExist(external_id)
    account = locks.lock_accounts([account_id])[account_id]
    before = account.balance
    entry = ledger_post(account=account, bet=None, kind=LedgerKind.ADJUSTMENT, amount=amount, reason=reason)
    audit_record(actor=actor, action="account.adjusted", obj=account,
                 before={"balance": str(before)}, after={"balance": str(account.balance), "amount": str(amount)},
                 reason=reason)
    return entry


@dataclass
class SweepResult:
    batches: int = 0
    settled_rounds: int = 0
    failed_batches: int = 0


def settlement_sweep(*, round_ids=None, worker: str | None = None) -> SweepResult:
    """Settle DEALT rounds batch after batch until none is left; safe to run anywhere, any time.

    A batch that fails is recorded as failed and its rounds are counted as failed attempts; when
    it held several rounds, each is then tried alone, so one bad round fails alone and the rest
    settle. A round that failed ``MAX_SETTLEMENT_FAILURES`` times is left to an operator.
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
def settlement_run(*, round_ids=None, limit: int = SETTLEMENT_BATCH_ROUNDS, worker: str | None = None,
                   claimed: list | None = None):
    """Settle up to ``limit`` DEALT rounds in one transaction; None when there is nothing to claim.

    Rounds are claimed with row locks that skip rounds another worker holds, so any number of
    workers (and sweeps) can run at once: a bet's status only changes under its round's lock, the
    bet update only touches PENDING bets, and the ledger's unique (bet, kind) stops any payout from
    being written twice. The writes are set-based: a handful of statements per batch.
    """
    worker = worker or worker_name()
    outcome_by_round = dict(locks.lock_dealt_rounds(round_ids, limit, MAX_SETTLEMENT_FAILURES))
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
        settled.append((bet_id, _STATUS_BY_KIND[settlement_kind(bet_type, outcome)], returned))
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
    audit_record(actor=f"system:{worker}", action="rounds.settled", obj=batch,
                 after={"rounds": batch.round_ids, "bets": len(bets), "total_staked": str(total_staked),
                        "total_paid": str(total_paid)})
    return batch


@transaction.atomic
def sweep_request(*, actor) -> None:
    """Ask the workers for a sweep now (an operator's button, the API); it runs once committed."""
    from settlement.tasks import sweep

    audit_record(actor=actor, action="settlement.sweep_requested", object_type="settlement", object_id="queue")
    transaction.on_commit(sweep.delay)
