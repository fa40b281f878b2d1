"""Reads of the settlement state, for the admin queue page and the API."""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.core.paginator import Paginator
from django.db.models import Min, Sum
from django.utils import timezone

from games.choices import RoundStatus
from games.models import Bet, Round
from settlement.models import Account, LedgerEntry, SettlementBatch
from settlement.services import MAX_SETTLEMENT_FAILURES

RECENT_BATCHES = 20


@dataclass(frozen=True)
class SettlementQueue:
    waiting_rounds: int
    oldest_dealt_at: datetime | None
    stuck_rounds: int
    recent_batches: list
    failed_batches: list

    @property
    def oldest_age_seconds(self) -> float | None:
        if self.oldest_dealt_at is None:
            return None
        return (timezone.now() - self.oldest_dealt_at).total_seconds()


def settlement_queue() -> SettlementQueue:
    waiting = Round.objects.filter(status=RoundStatus.DEALT)
    return SettlementQueue(
        waiting_rounds=waiting.count(),
        oldest_dealt_at=waiting.aggregate(oldest=Min("dealt_at"))["oldest"],
        stuck_rounds=waiting.filter(settlement_failures__gte=MAX_SETTLEMENT_FAILURES).count(),
        recent_batches=list(SettlementBatch.objects.order_by("-id")[:RECENT_BATCHES]),
        failed_batches=list(
            SettlementBatch.objects.filter(outcome=SettlementBatch.Outcome.FAILED).order_by("-id")[:RECENT_BATCHES]
        ),
    )


def batch_list(*, outcome: str | None = None):
    batches = SettlementBatch.objects.order_by("-id")
    if outcome:
        batches = batches.filter(outcome=outcome)
    return batches


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


def account_history(*, account: Account, page=1, per_page: int = HISTORY_PER_PAGE) -> AccountHistory:
    """The account's ledger, oldest first, one page of it, each entry with its bet and the running sum.

    The running sum is exact (Decimal): the sum of all amounts before the page, from the database,
    plus the page's amounts in order.
    """
    entries = (LedgerEntry.objects.filter(account=account).select_related("bet__round__game")
               .order_by("id"))
    page_obj = Paginator(entries, per_page).get_page(page)
    rows = list(page_obj.object_list)
    opening = Decimal("0.00")
    if rows:
        before = LedgerEntry.objects.filter(account=account, id__lt=rows[0].pk).aggregate(total=Sum("amount"))
        opening = before["total"] or Decimal("0.00")
    running, history = opening, []
    for entry in rows:
        running += entry.amount
        history.append(HistoryRow(entry=entry, running=running))
    page_obj.object_list = history
    return AccountHistory(page=page_obj, opening=opening, discrepancies=sum(row.differs for row in history))


def account_bets(*, account: Account, page=1, per_page: int = HISTORY_PER_PAGE):
    """A page of the account's bets, newest first, with their rounds and games."""
    bets = Bet.objects.filter(account=account).select_related("round__game").order_by("-id")
    return Paginator(bets, per_page).get_page(page)


def account_ledger_discrepancies(*, account: Account, limit: int = DISCREPANCIES_SHOWN,
                                 per_page: int = HISTORY_PER_PAGE) -> list[dict]:
    """Walk the whole ledger of the account (streamed) and list the first ``limit`` entries whose
    balance after differs from the running sum, each with the history page it is on."""
    found, running = [], Decimal("0.00")
    rows = (LedgerEntry.objects.filter(account=account).order_by("id")
            .values_list("id", "amount", "balance_after"))
    for position, (entry_id, amount, balance_after) in enumerate(rows.iterator(chunk_size=2000)):
        running += amount
        if running != balance_after:
            found.append({"id": entry_id, "running": running, "balance_after": balance_after,
                          "page": position // per_page + 1})
            if len(found) >= limit:
                break
    return found
