from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from games import services as game_services
from games.choices import BetStatus
from games.engine import headline_multiplier
from games.models import Bet, Round


@pytest.fixture
def settled_bets(game, integration, funded_account):
    """settled_bets([(status, payout), ...], bet_type="BANKER") writes settled bets of 10.00 on one round;
    a side bet with its ``paytable`` (its multiplier the paytable's highest, as when accepted)."""
    account = funded_account("whale", "0")

    def create(outcomes, bet_type="BANKER", paytable=None):
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        now = timezone.now()
        multiplier = game.multipliers.for_bet(bet_type) if paytable is None else headline_multiplier(paytable)
        Bet.objects.bulk_create(
            Bet(round=round_, account=account, client=integration, bet_type=bet_type, stake=Decimal("10.00"),
                multiplier=multiplier, paytable=paytable, idempotency_key=f"{round_.pk}-{n}", status=status,
                payout=Decimal(payout), settled_at=now)
            for n, (status, payout) in enumerate(outcomes))
        return round_

    return create


@pytest.fixture
def dealt_long_ago(game, integration):
    def create(minutes=10, failures=0):
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        game_services.round_deal(round_id=round_.pk, actor=integration)
        Round.objects.filter(pk=round_.pk).update(dealt_at=timezone.now() - timedelta(minutes=minutes),
                                                  settlement_failures=failures)
        return round_

    return create


WON, LOST = BetStatus.WON, BetStatus.LOST
