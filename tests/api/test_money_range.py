"""The range of money: a documented maximum balance and stake, columns wide enough that nothing
within them overflows, and a clear 400 beyond them."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from games import services as games
from games.choices import BetStatus, RoundStatus
from games.models import Bet
from settlement.services import settlement_run
from tests.api.helpers import API, assert_names_field
from tests.settlement.test_services import assert_ledger_invariant
from wallet import services
from wallet.models import Account
from wallet.validators import MAX_BALANCE, MAX_STAKE, MONEY_DECIMAL_PLACES, MONEY_MAX_DIGITS

pytestmark = pytest.mark.django_db

NEAR_THE_TOP = "999999999998.99"
COLUMN_MAX = Decimal(10) ** (MONEY_MAX_DIGITS - MONEY_DECIMAL_PLACES) - Decimal("0.01")


def test_the_columns_hold_a_million_of_the_largest_wins_past_the_maximum_balance():
    from games.engine.payout import MAX_MULTIPLIER

    assert MAX_BALANCE + 1_000_000 * MAX_STAKE * MAX_MULTIPLIER < COLUMN_MAX


def bet_each_side(round_, client, account: str, stake: str):
    for index, bet_type in enumerate(["PLAYER", "BANKER", "TIE"]):
        games.bet_place(round_id=round_.pk, account_external_id=account, bet_type=bet_type, stake=stake,
                        idempotency_key=f"{account}-{round_.pk}-{index}", client=client)


def test_a_balance_at_the_top_wins_beside_another_player_and_both_are_paid(game, integration, funded_account):
    funded_account("whale", NEAR_THE_TOP)
    funded_account("minnow", "100.00")
    round_ = games.round_open(game_id=game.pk, actor=integration)
    bet_each_side(round_, integration, "whale", "1000.00")
    bet_each_side(round_, integration, "minnow", "10.00")
    games.round_deal(round_id=round_.pk, actor=integration)
    assert settlement_run(round_ids=[round_.pk]) is not None
    round_.refresh_from_db()
    assert round_.status == RoundStatus.SETTLED
    assert not Bet.objects.filter(status=BetStatus.PENDING).exists()
    minnow = Account.objects.get(external_id="minnow")
    assert minnow.balance > Decimal("70.00")  # at least one of its three bets returned something
    assert_ledger_invariant()


def test_winnings_may_take_a_balance_past_the_maximum_and_refunds_and_debits_still_work(
        game, integration, operator, funded_account, as_operator, settings):
    settings.APPROVAL_ADJUSTMENT_WINDOW_HOURS = 0  # the funding adjustment leaves the later ones alone
    funded_account("whale", str(MAX_BALANCE))
    round_ = games.round_open(game_id=game.pk, actor=integration)
    bet_each_side(round_, integration, "whale", "1000.00")
    games.round_deal(round_id=round_.pk, actor=integration)
    settlement_run(round_ids=[round_.pk])
    won = Account.objects.get(external_id="whale").balance
    assert won > MAX_BALANCE - Decimal("3000.00")
    second = games.round_open(game_id=game.pk, actor=integration)
    games.bet_place(round_id=second.pk, account_external_id="whale", bet_type="TIE", stake="1000.00",
                    idempotency_key="void-me", client=integration)
    response = as_operator.post(f"{API}/rounds/{second.pk}/void/", {"reason": "table fault"})
    assert response.status_code == 200, response.content
    assert Account.objects.get(external_id="whale").balance == won
    response = as_operator.post(f"{API}/accounts/whale/adjust/", {"amount": "-0.01", "reason": "fee"})
    assert response.status_code == 201, response.content
    assert_ledger_invariant()


@pytest.mark.parametrize("amount", ["1.01", "1000000000000.00", "99999999999999999.99"])
def test_a_credit_past_the_maximum_balance_is_a_400_and_writes_nothing(as_operator, funded_account, unchanged,
                                                                      amount):
    funded_account("whale", NEAR_THE_TOP)
    with unchanged():
        response = as_operator.post(f"{API}/accounts/whale/adjust/", {"amount": amount, "reason": "deposit"})
    assert_names_field(response, 400, "amount")


def test_a_credit_up_to_the_maximum_balance_is_accepted(as_operator, funded_account, settings):
    settings.APPROVAL_ADJUSTMENT_WINDOW_HOURS = 0  # the funding adjustment leaves the later ones alone
    funded_account("whale", NEAR_THE_TOP)
    response = as_operator.post(f"{API}/accounts/whale/adjust/", {"amount": "1.00", "reason": "deposit"})
    assert response.status_code == 201, response.content
    assert Account.objects.get(external_id="whale").balance == MAX_BALANCE


def test_the_service_refuses_an_adjustment_larger_than_the_maximum_either_way(operator, funded_account):
    funded_account("p1", "0")
    with pytest.raises(ValidationError) as error:
        services.account_adjust(external_id="p1", actor=operator, amount="-1000000000000.00", reason="x")
    assert "amount" in error.value.message_dict


def test_a_game_cannot_take_stakes_above_the_maximum_stake(as_operator, game, unchanged):
    too_much = str(MAX_STAKE + Decimal("0.01"))
    with unchanged():
        created = as_operator.post(f"{API}/games/", {"slug": "vip", "name": "VIP", "min_bet": "1.00",
                                                     "max_bet": too_much})
        changed = as_operator.patch(f"{API}/games/{game.slug}/", {"max_bet": too_much, "reason": "VIP"})
    assert_names_field(created, 400, "max_bet")
    assert_names_field(changed, 400, "max_bet")


def test_the_database_refuses_a_max_bet_above_the_maximum_stake(game):
    from django.db import IntegrityError, transaction

    from games.models import GameInstance

    with pytest.raises(IntegrityError), transaction.atomic():
        GameInstance.objects.filter(pk=game.pk).update(max_bet=MAX_STAKE + 1)
