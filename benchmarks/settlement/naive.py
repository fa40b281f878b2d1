"""(b) The naive loop: row by row through the ORM, as a typical implementation would write it."""

import os
import time

from django.db import connection, transaction
from django.test.utils import override_settings
from django.utils import timezone

from games.choices import STATUS_BY_SETTLEMENT_KIND, BetStatus, RoundStatus
from games.engine import bet_settlement, result_from_labels, round_events
from games.models import Bet, Round
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

from .measurement import Measurement, backend_pid, cpu_seconds


def measure_naive(sample: int, bets_per_round: int) -> Measurement:
    """Settle the first rounds holding about ``sample`` bets (the loop is too slow for them all)."""
    round_ids = list(Round.objects.filter(status=RoundStatus.DEALT).order_by("pk")
                     .values_list("pk", flat=True)[:max(1, -(-sample // bets_per_round))])
    count = Bet.objects.filter(round_id__in=round_ids).count()
    with connection.cursor() as cursor:
        backend = backend_pid(cursor)
    cpu = cpu_seconds(backend) + cpu_seconds(os.getpid())
    with override_settings(DEBUG=False):  # no query log: the loop is slow enough as it is
        started = time.perf_counter()
        for round_ in Round.objects.filter(pk__in=round_ids, status=RoundStatus.DEALT).order_by("pk"):
            with transaction.atomic():
                events = round_events(result_from_labels(round_.cards, round_.player_cards, round_.banker_cards))
                for bet in Bet.objects.filter(round=round_, status=BetStatus.PENDING).order_by("pk"):
                    settled, returned = bet_settlement(bet.bet_type, bet.stake, bet.multiplier, bet.paytable,
                                                       events[bet.bet_type])
                    bet.status = STATUS_BY_SETTLEMENT_KIND[settled]
                    bet.payout = returned
                    bet.settled_at = timezone.now()
                    bet.save()
                    if returned:
                        account = Account.objects.select_for_update().get(pk=bet.account_id)
                        account.balance += returned
                        account.save()
                        LedgerEntry.objects.create(account=account, bet_id=bet.pk, kind=LedgerKind.PAYOUT,
                                                   amount=returned, balance_after=account.balance)
                round_.status = RoundStatus.SETTLED
                round_.settled_at = timezone.now()
                round_.save()
        seconds = time.perf_counter() - started
    cpu = cpu_seconds(backend) + cpu_seconds(os.getpid()) - cpu
    return Measurement(bets=count, seconds=seconds, cpu_seconds=cpu)
