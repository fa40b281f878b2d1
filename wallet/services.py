"""Money actions on accounts: opening them, moving money with its ledger entry, manual adjustments."""

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, IntegrityError, transaction
from django.utils import timezone

from audit.choices import AuditAction
from audit.services import audit_record
from audit.validators import required_reason
from core.currencies import amount_text
from core.money import parse_money
from wallet import locks, writes
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEffect, LedgerEntry
from wallet.validators import MAX_BALANCE, validate_adjustment, validate_in_currency


def ledger_post(*, account: Account, bet_id: int | None, kind: str, amount: Decimal,
                reason: str = "") -> LedgerEntry:
    """Move money on a locked account: the balance and its ledger entry change together, inside the
    caller's transaction. An entry of a bet records its effect (LedgerEffect) too: a second one of
    the same kind raises IntegrityError."""
    account.balance += amount
    if account.balance < 0:
        raise ValidationError({"amount": "The balance would go below zero."})
    account.save(update_fields=["balance"])
    if bet_id is not None:
        LedgerEffect.objects.create(bet_id=bet_id, kind=kind)
    return LedgerEntry.objects.create(account=account, bet_id=bet_id, kind=kind, amount=amount,
                                      balance_after=account.balance, reason=reason)


def ledger_post_many(*, accounts: dict, postings: list, using: str = DEFAULT_DB_ALIAS) -> None:
    """ledger_post for many postings at once, in their order, on locked accounts ({id: account}).

    postings: [(account id, bet id, kind, amount)], all of one kind. One UPDATE of the balances and
    one INSERT of the entries, whatever their number; each entry's balance_after is the balance
    after it.
    """
    if not postings:
        return
    kinds = {kind for _account, _bet, kind, _amount in postings}
    if len(kinds) != 1:
        raise ValueError("postings of one kind at a time")
    entries = []
    for account_id, bet_id, _kind, amount in postings:
        account = accounts[account_id]
        account.balance += amount
        if account.balance < 0:
            raise ValidationError({"amount": "The balance would go below zero."})
        entries.append((account_id, bet_id, amount, account.balance))
    writes.set_balances({account_id: accounts[account_id].balance for account_id, *_rest in entries}, using=using)
    writes.insert_ledger_entries(entries, kind=kinds.pop(), created_at=timezone.now(), using=using)


def account_create(*, actor, external_id: str, currency: str = "USD") -> Account:
    try:
        with transaction.atomic():
            account = Account(external_id=external_id, currency=currency)
            account.full_clean()
            account.save()
            audit_record(actor=actor, action=AuditAction.ACCOUNT_CREATED, obj=account,
                         after={"external_id": external_id, "currency": currency})
            return account
    except IntegrityError:
        # Two requests created the same account at once; the database kept one.
        if Account.objects.filter(external_id=external_id).exists():
            raise ValidationError({"external_id": "Account with this External id already exists."}) from None
        raise


@transaction.atomic
def account_adjust(*, external_id: str, actor, amount, reason: str) -> LedgerEntry:
    """Credit (positive) or debit (negative) an account by hand, with a reason."""
    amount = parse_money(amount, field="amount", validator=validate_adjustment)
    reason = required_reason(reason)
    account_id = Account.objects.filter(external_id=external_id).values_list("pk", flat=True).first()
    if account_id is None:
        raise Account.DoesNotExist(external_id)
    account = locks.lock_accounts([account_id])[account_id]
    try:
        validate_in_currency(amount, account.currency)
    except ValidationError as error:
        raise ValidationError({"amount": error.messages}) from None
    before = account.balance
    if amount > 0 and before + amount > MAX_BALANCE:
        raise ValidationError({"amount": f"Would take the balance past the maximum of {MAX_BALANCE}; "
                                         f"at most {max(MAX_BALANCE - before, 0)} can be credited."})
    entry = ledger_post(account=account, bet_id=None, kind=LedgerKind.ADJUSTMENT, amount=amount, reason=reason)
    audit_record(actor=actor, action=AuditAction.ACCOUNT_ADJUSTED, obj=account,
                 before={"balance": amount_text(before, account.currency)},
                 after={"balance": amount_text(account.balance, account.currency), "amount": str(amount)},
                 reason=reason)
    return entry
