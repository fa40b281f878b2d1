"""A batch's totals are kept by currency: a batch settling rounds of a USD and a JPY game never adds
yen to dollars; its plain sums are kept only when it settles one currency."""

from decimal import Decimal

import pytest

from audit.models import AuditEvent
from games import services as game_services
from games.models import Bet
from settlement import services
from settlement.models import SettlementBatch
from tests.api.helpers import API
from tests.settlement.test_services import open_round_with_bets

pytestmark = pytest.mark.django_db


def sums(currency: str) -> tuple:
    bets = Bet.objects.filter(round__game__currency=currency)
    return bets.count(), sum(bet.stake for bet in bets), sum(bet.payout for bet in bets)


def test_a_batch_of_two_currencies_keeps_each_apart(game, operator, integration, funded_account, api_as):
    yen = game_services.game_create(actor=operator, slug="yen-table", name="Yen", min_bet=Decimal(100),
                                    max_bet=Decimal(100_000), currency="JPY")
    funded_account("dollars", "500.00")
    funded_account("yen", "500000", currency="JPY")
    rounds = [open_round_with_bets(game, integration, [("dollars", "PLAYER", "10.25"), ("dollars", "TIE", "2.00")]),
              open_round_with_bets(yen, integration, [("yen", "BANKER", "1500"), ("yen", "TIE", "300")])]
    batch = services.settlement_run(round_ids=[round_.pk for round_ in rounds], worker="w")

    batch.refresh_from_db()
    assert batch.total_staked is None and batch.total_paid is None  # never 1,512.25 of nothing
    usd, jpy = sums("USD"), sums("JPY")
    assert batch.totals == {
        "JPY": {"bets": jpy[0], "staked": "1800", "paid": f"{jpy[2]:.0f}"},
        "USD": {"bets": usd[0], "staked": "12.25", "paid": f"{usd[2]:.2f}"},
    }
    event = AuditEvent.objects.get(action="rounds.settled")
    assert event.after["totals"] == batch.totals and "total_staked" not in event.after
    answered = api_as(operator).get(f"{API}/settlement/batches/").json()["results"][0]
    assert answered["totals"] == batch.totals and answered["total_staked"] is None


def test_a_batch_of_one_currency_keeps_its_plain_sums_too(game, integration, funded_account):
    funded_account("dollars", "500.00")
    open_round_with_bets(game, integration, [("dollars", "BANKER", "10.00")])
    batch = services.settlement_run(worker="w")
    batch.refresh_from_db()
    count, staked, paid = sums("USD")
    assert (batch.total_staked, batch.total_paid) == (staked, paid)
    assert batch.totals == {"USD": {"bets": count, "staked": f"{staked:.2f}", "paid": f"{paid:.2f}"}}
    assert SettlementBatch.objects.count() == 1
