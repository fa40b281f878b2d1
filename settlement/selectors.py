"""Reads of the settlement state, for the admin queue page and the API, and of a batch's bets."""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS
from django.db.models import Count, Min, Q
from django.utils import timezone

from games.choices import BetStatus, RoundStatus
from games.models import Bet, Round
from games.selectors import bet_ids_placed
from settlement.models import SettlementBatch

RECENT_BATCHES = 20


def pending_bets_of(round_ids, *, since: datetime, until: datetime, using: str = DEFAULT_DB_ALIAS) -> list:
    """The PENDING bets of these rounds, in id order, as (id, round id, account id, bet type, stake,
    multiplier, paytable); their rounds opened from ``since``, so only the bets' months placed from
    then until ``until`` are read (games.selectors.bet_ids_placed, whose bounds every plan sees)."""
    return list(
        Bet.objects.using(using)
        .filter(bet_ids_placed(since=since, until=until, using=using), round_id__in=round_ids,
                status=BetStatus.PENDING)
        .order_by("pk").values_list("pk", "round_id", "account_id", "bet_type", "stake", "multiplier", "paytable")
    )


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


def settlement_backlog(*, using: str = DEFAULT_DB_ALIAS) -> dict:
    """What waits for settlement, for the metrics: dealt rounds the sweep will take (``waiting``), the
    oldest one's deal (``oldest_dealt_at``), rounds left for operators after too many failures
    (``for_operators``), and held bets (``held_bets``). Two index scans (status, dealt_at; status)."""
    still_tried = Q(settlement_failures__lt=settings.MAX_SETTLEMENT_FAILURES)
    rounds = Round.objects.using(using).filter(status=RoundStatus.DEALT).aggregate(
        waiting=Count("id", filter=still_tried), oldest_dealt_at=Min("dealt_at", filter=still_tried),
        for_operators=Count("id", filter=~still_tried))
    return {**rounds, "held_bets": Bet.objects.using(using).filter(status=BetStatus.HELD).count()}


def round_settlement_times(round_ids, *, using: str = DEFAULT_DB_ALIAS) -> list:
    """(dealt_at, settled_at) of each settled round of ``round_ids``."""
    return list(Round.objects.using(using).filter(pk__in=list(round_ids), settled_at__isnull=False)
                .values_list("dealt_at", "settled_at"))
