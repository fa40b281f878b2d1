"""Reads of the settlement state, for the admin queue page and the API."""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS
from django.db.models import Min
from django.utils import timezone

from games.choices import BetStatus, RoundStatus
from games.models import Bet, Round
from settlement.models import SettlementBatch

RECENT_BATCHES = 20


@dataclass(frozen=True)
class SettlementQueue:
    waiting_rounds: int
    oldest_dealt_at: datetime | None
    stuck_rounds: int
    recent_batches: list
    failed_batches: list
    held_bets: int | None = None  # None when not counted (the dashboard reads no bets)

    @property
    def oldest_age_seconds(self) -> float | None:
        if self.oldest_dealt_at is None:
            return None
        return (timezone.now() - self.oldest_dealt_at).total_seconds()


def settlement_queue(*, count_held: bool = True, using: str = DEFAULT_DB_ALIAS) -> SettlementQueue:
    waiting = Round.objects.using(using).filter(status=RoundStatus.DEALT)
    batches = SettlementBatch.objects.using(using)
    return SettlementQueue(
        waiting_rounds=waiting.count(),
        oldest_dealt_at=waiting.aggregate(oldest=Min("dealt_at"))["oldest"],
        stuck_rounds=waiting.filter(settlement_failures__gte=settings.MAX_SETTLEMENT_FAILURES).count(),
        recent_batches=list(batches.order_by("-id")[:RECENT_BATCHES]),
        failed_batches=list(batches.filter(outcome=SettlementBatch.Outcome.FAILED).order_by("-id")[:RECENT_BATCHES]),
        held_bets=Bet.objects.using(using).filter(status=BetStatus.HELD).count() if count_held else None,
    )


def batch_list(*, outcome: str | None = None, using: str = DEFAULT_DB_ALIAS):
    batches = SettlementBatch.objects.using(using).order_by("-id")
    if outcome:
        batches = batches.filter(outcome=outcome)
    return batches
