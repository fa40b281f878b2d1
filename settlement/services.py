"""Money: accounts, adjustments, the ledger, and the settlement of dealt rounds in batches."""

import os
import socket
from collections import defaultdict
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from games import locks
from games.audit import audit_record
from games.choices import BetStatus, RoundStatus
from games.engine import bet_return, settlement_kind
from games.models import Bet, Round
from games.validators import MONEY_DECIMAL_PLACES
from settlement.choices import LedgerKind
from settlement.models import Account, LedgerEntry, SettlementBatch

SETTLEMENT_BATCH_ROUNDS = int(os.environ.get("SETTLEMENT_BATCH_ROUNDS", "200"))

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


@transaction.atomic
def account_create(*, actor, external_id: str, currency: str = "USD") -> Account:
    account = Account(external_id=external_id, currency=currency)
    account.full_clean()
    account.save()
    audit_record(actor=actor, action="account.created", obj=account,
                 after={"external_id": external_id, "currency": currency})
    return account


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


@transaction.atomic
def settlement_run(*, round_ids=None, limit: int = SETTLEMENT_BATCH_ROUNDS, worker: str | None = None):
    """Settle up to ``limit`` DEALT rounds in one transaction; None when there is nothing to claim.

    Rounds are claimed with row locks that skip rounds another worker holds, so any number of
    workers (and sweeps) can run at once: a bet's status only changes under its round's lock, and
    the ledger's unique (bet, kind) stops any payout from being written twice.
    """
    worker = worker or worker_name()
    rounds = locks.lock_dealt_rounds(round_ids, limit)
    if not rounds:
        return None
    started = timezone.now()
    outcome_by_round = {round_.pk: round_.outcome for round_ in rounds}
    bets = list(Bet.objects.filter(round_id__in=outcome_by_round, status=BetStatus.PENDING).order_by("pk"))
    accounts = locks.lock_accounts(bet.account_id for bet in bets)
    total_staked = Decimal(0)
    total_paid = Decimal(0)
    entries = []
    for bet in bets:
        outcome = outcome_by_round[bet.round_id]
        # The bet's own multiplier, the one in force when it was accepted, settles it.
        returned = bet_return(bet.bet_type, bet.stake, outcome, bet.multiplier)
        bet.payout = returned
        bet.status = _STATUS_BY_KIND[settlement_kind(bet.bet_type, outcome)]
        bet.settled_at = started
        total_staked += bet.stake
        total_paid += returned
        if returned:
            account = accounts[bet.account_id]
            account.balance += returned
            entries.append(LedgerEntry(account=account, bet=bet, kind=LedgerKind.PAYOUT, amount=returned,
                                       balance_after=account.balance))
    Bet.objects.bulk_update(bets, ["payout", "status", "settled_at"], batch_size=1000)
    LedgerEntry.objects.bulk_create(entries, batch_size=1000)
    credited = {entry.account_id for entry in entries}
    Account.objects.bulk_update([accounts[pk] for pk in sorted(credited)], ["balance"], batch_size=1000)
    Round.objects.filter(pk__in=outcome_by_round).update(status=RoundStatus.SETTLED, settled_at=started)
    batch = SettlementBatch.objects.create(
        worker=worker, started_at=started, finished_at=timezone.now(), rounds=len(rounds), bets=len(bets),
        total_staked=total_staked, total_paid=total_paid, round_ids=sorted(outcome_by_round),
        outcome=SettlementBatch.Outcome.OK,
    )
    audit_record(actor=f"system:{worker}", action="rounds.settled", obj=batch,
                 after={"rounds": batch.round_ids, "bets": len(bets), "total_staked": str(total_staked),
                        "total_paid": str(total_paid)})
    return batch

