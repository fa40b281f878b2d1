"""Reads of accounts and their ledger, each from the database alias ``using`` (the default unless told)."""

from dataclasses import dataclass
from decimal import Decimal

from django.core.paginator import Paginator
from django.db import DEFAULT_DB_ALIAS
from django.db.models import F, QuerySet, Sum
from django.db.models.functions import Abs, Coalesce

from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry


def account_list(*, using: str = DEFAULT_DB_ALIAS) -> QuerySet[Account]:
    return Account.objects.using(using).all()


def account_get(*, external_id: str, using: str = DEFAULT_DB_ALIAS) -> Account:
    """The account with this external id; Account.DoesNotExist when there is none."""
    return Account.objects.using(using).get(external_id=external_id)


def account_adjustments_total(*, account_id: int, since, using: str = DEFAULT_DB_ALIAS) -> Decimal:
    """The sum of the absolute amounts of the account's adjustments made since ``since`` (applied
    ones: the ledger holds nothing else)."""
    total = (LedgerEntry.objects.using(using)
             .filter(account_id=account_id, kind=LedgerKind.ADJUSTMENT, created_at__gte=since)
             .aggregate(total=Sum(Abs("amount")))["total"])
    return total or Decimal("0.00")


def account_ledger(*, account: Account, using: str = DEFAULT_DB_ALIAS) -> QuerySet[LedgerEntry]:
    """The account's ledger, newest entry first."""
    return LedgerEntry.objects.using(using).filter(account=account).select_related("account").order_by("-id")


# --- Account history ----------------------------------------------------------------------------

HISTORY_PER_PAGE = 50
DISCREPANCIES_SHOWN = 100


@dataclass(frozen=True)
class HistoryRow:
    """A ledger entry with the running sum of the account's ledger up to and including it."""

    entry: LedgerEntry
    running: Decimal

    @property
    def differs(self) -> bool:
        """The stored balance after the entry is not the sum of every amount so far."""
        return self.running != self.entry.balance_after

    @property
    def difference(self) -> Decimal:
        return self.entry.balance_after - self.running


@dataclass(frozen=True)
class AccountHistory:
    page: object  # django.core.paginator.Page of HistoryRow
    opening: Decimal  # the running sum before the page's first entry
    discrepancies: int  # rows of this page whose balance after differs from the running sum


def account_history(*, account: Account, page=1, per_page: int = HISTORY_PER_PAGE,
                    using: str = DEFAULT_DB_ALIAS) -> AccountHistory:
    """The account's ledger, oldest first, one page of it, each entry with its bet and the running sum.

    The running sum is exact (Decimal): the sum of all amounts before the page, from the database,
    plus the page's amounts in order.
    """
    entries = LedgerEntry.objects.using(using).filter(account=account).order_by("id")
    page_obj = Paginator(entries, per_page).get_page(page)
    rows = list(page_obj.object_list)
    opening = Decimal("0.00")
    if rows:
        before = (LedgerEntry.objects.using(using).filter(account=account, id__lt=rows[0].pk)
                  .aggregate(total=Sum("amount")))
        opening = before["total"] or Decimal("0.00")
    running, history = opening, []
    for entry in rows:
        running += entry.amount
        history.append(HistoryRow(entry=entry, running=running))
    page_obj.object_list = history
    return AccountHistory(page=page_obj, opening=opening, discrepancies=sum(row.differs for row in history))


def account_ledger_discrepancies(*, account: Account, limit: int = DISCREPANCIES_SHOWN,
                                 per_page: int = HISTORY_PER_PAGE, using: str = DEFAULT_DB_ALIAS) -> list[dict]:
    """Walk the whole ledger of the account (streamed) and list the first ``limit`` entries whose
    balance after differs from the running sum, each with the history page it is on."""
    found, running = [], Decimal("0.00")
    rows = (LedgerEntry.objects.using(using).filter(account=account).order_by("id")
            .values_list("id", "amount", "balance_after"))
    for position, (entry_id, amount, balance_after) in enumerate(rows.iterator(chunk_size=2000)):
        running += amount
        if running != balance_after:
            found.append({"id": entry_id, "running": running, "balance_after": balance_after,
                          "page": position // per_page + 1})
            if len(found) >= limit:
                break
    return found


def accounts_off_their_ledger(*, limit: int = DISCREPANCIES_SHOWN, using: str = DEFAULT_DB_ALIAS) -> list[tuple]:
    """Accounts whose balance is not the sum of their ledger, [(external id, balance, ledger sum)]: none
    in a sound database (a restored backup is checked by this)."""
    totals = Account.objects.using(using).annotate(ledger_sum=Coalesce(Sum("ledger__amount"), Decimal("0.00")))
    return list(totals.exclude(balance=F("ledger_sum")).order_by("pk")
                .values_list("external_id", "balance", "ledger_sum")[:limit])
