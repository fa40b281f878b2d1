"""Currencies with their own minor units (core.currencies): JPY has no decimals, KWD three, a configured
BTC eight. A currency neither ISO 4217 nor configured is refused where a game or an account is made; a
stake or a limit with more places than its currency is refused naming its field; payouts round down to
the currency's unit, in settlement batches that mix currencies; and the dashboard adds one currency only.
"""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from hypothesis import example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from core.currencies import amount_text, coarser_than, minor_unit, places_of
from core.money import money_text
from games import services as game_services
from games.engine import BetType, Outcome, bet_return, settlement_kind
from games.engine.payout import DEFAULT_MULTIPLIERS, MAX_MULTIPLIER, MIN_MULTIPLIER
from games.models import Bet, GameInstance
from settlement import aggregates, reports
from settlement import services as settlement_services
from settlement.models import DailyBetTotals
from tests.api.helpers import API, assert_names_field
from wallet import services as wallet_services
from wallet.models import Account

pytestmark = pytest.mark.django_db

BTC_AND_USDT = {"BTC": 8, "USDT": 6}


@pytest.fixture
def crypto(settings):
    settings.CURRENCY_MINOR_UNITS = BTC_AND_USDT


def table(operator, slug, currency, min_bet, max_bet):
    return game_services.game_create(actor=operator, slug=slug, name=slug, currency=currency,
                                     min_bet=Decimal(min_bet), max_bet=Decimal(max_bet))


def account(operator, external_id, currency, balance):
    wallet_services.account_create(actor=operator, external_id=external_id, currency=currency)
    wallet_services.account_adjust(external_id=external_id, actor=operator, amount=balance, reason="deposit")
    return Account.objects.get(external_id=external_id)


@pytest.fixture
def yen_table(operator):
    return table(operator, "yen-table", "JPY", "100", "100000")


@pytest.fixture
def yen_player(operator):
    return account(operator, "yen-player", "JPY", "100000")


# --- The one home of minor units --------------------------------------------------------------------

def test_iso_4217_places_and_configured_ones(settings):
    assert (places_of("JPY"), places_of("USD"), places_of("EUR"), places_of("KWD"), places_of("BHD")) == (0, 2, 2, 3, 3)
    assert places_of("BTC") is None
    settings.CURRENCY_MINOR_UNITS = BTC_AND_USDT
    assert (places_of("BTC"), places_of("USDT"), minor_unit("BTC")) == (8, 6, Decimal("0.00000001"))
    assert "JPY" in coarser_than(2) and "USD" not in coarser_than(2) and "USD" in coarser_than(3)
    assert "USDT" in coarser_than(7) and "BTC" not in coarser_than(8) and coarser_than(0) == ()


def test_money_text_writes_each_currency_at_its_own_places(crypto):
    assert money_text(Decimal("1234.00000000"), "JPY") == "1,234 JPY"
    assert money_text(Decimal("-1.25000000"), "KWD") == "−1.250 KWD"
    assert money_text(Decimal("10.50000000"), "USD") == "10.50 USD"
    assert money_text(Decimal("0.00012345"), "BTC") == "0.00012345 BTC"
    assert money_text(Decimal("10.00000000")) == "10.00"  # no currency: the places it needs, at least two
    assert amount_text(Decimal("100.00000000"), "JPY") == "100"


# --- Unknown currencies are refused where games and accounts are made -------------------------------

@pytest.mark.parametrize("currency", ["XYZ", "BTC", "usd", "US", "ABCDEFGHI"])
def test_an_unknown_currency_is_refused_for_a_game_and_an_account(as_operator, currency, unchanged):
    with unchanged():
        response = as_operator.post(f"{API}/games/", {"slug": "t", "name": "T", "currency": currency, "reason": "new",
                                                      "min_bet": "1", "max_bet": "10"})
        assert_names_field(response, 400, "currency")
        response = as_operator.post(f"{API}/accounts/", {"external_id": "p", "currency": currency})
        assert_names_field(response, 400, "currency")


def test_a_configured_currency_is_taken(as_operator, crypto):
    response = as_operator.post(f"{API}/games/", {"slug": "btc", "name": "BTC", "currency": "BTC", "reason": "new",
                                                  "status": "suspended", "min_bet": "0.00000100", "max_bet": "2.5"})
    assert response.status_code == 201, response.content
    assert response.json()["min_bet"] == "0.00000100" and response.json()["max_bet"] == "2.50000000"
    response = as_operator.post(f"{API}/accounts/", {"external_id": "p", "currency": "USDT"})
    assert response.status_code == 201, response.content


def test_the_database_refuses_a_code_of_another_shape(game):
    with pytest.raises(IntegrityError), transaction.atomic():
        GameInstance.objects.filter(pk=game.pk).update(currency="usd")


# --- Limits and stakes in the currency's places ------------------------------------------------------

@pytest.mark.parametrize("field,value", [("min_bet", "100.5"), ("max_bet", "1000.25")])
def test_limits_have_no_more_places_than_the_currency(as_operator, field, value, unchanged):
    with unchanged():
        response = as_operator.post(f"{API}/games/", {"slug": "yen", "name": "Yen", "currency": "JPY", "reason": "new",
                                                      "min_bet": "100", "max_bet": "1000", field: value})
    assert_names_field(response, 400, field)
    assert "JPY" in response.json()[field][0]


def test_the_database_refuses_limits_finer_than_an_iso_currency(yen_table):
    with pytest.raises(IntegrityError), transaction.atomic():
        GameInstance.objects.filter(pk=yen_table.pk).update(min_bet=Decimal("100.5"))


def test_the_model_refuses_limits_finer_than_the_currency(operator):
    with pytest.raises(ValidationError) as refused:
        table(operator, "kwd", "KWD", "0.0005", "10")
    assert set(refused.value.message_dict) == {"min_bet"}


@pytest.mark.parametrize("one_statement", [True, False])
def test_a_yen_stake_is_whole(settings, as_integration, operator, integration, yen_table, yen_player,
                              one_statement):
    settings.BET_IN_ONE_STATEMENT = one_statement
    round_ = game_services.round_open(game_id=yen_table.pk, actor=integration)
    url = f"{API}/rounds/{round_.pk}/bets/"
    bet = {"account": "yen-player", "bet_type": "BANKER", "idempotency_key": "k-1"}
    refused = as_integration.post(url, {**bet, "stake": "100.5"})
    assert_names_field(refused, 400, "stake")
    assert "JPY" in refused.json()["stake"][0]
    assert not Bet.objects.exists()
    accepted = as_integration.post(url, {**bet, "stake": "100"})
    assert accepted.status_code == 201, accepted.content
    assert accepted.json()["stake"] == "100"
    # Trailing zeros are no places: 100.00 yen is 100 yen (a replay of the same bet).
    assert as_integration.post(url, {**bet, "stake": "100.00"}).status_code == 200
    yen_player.refresh_from_db()
    assert yen_player.balance == Decimal("99900")


def test_a_bulk_item_with_a_yen_fraction_is_refused_alone(as_integration, integration, yen_table, yen_player):
    round_ = game_services.round_open(game_id=yen_table.pk, actor=integration)
    items = [{"account": "yen-player", "bet_type": "PLAYER", "stake": stake, "idempotency_key": f"k-{n}"}
             for n, stake in enumerate(["100.5", "250", "0.01"])]
    response = as_integration.post(f"{API}/rounds/{round_.pk}/bets/bulk/", {"bets": items})
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [result["status"] for result in results] == [400, 201, 400]
    assert "stake" in results[0]["errors"] and "stake" in results[2]["errors"]
    assert results[1]["bet"]["stake"] == "250"


# --- Payouts round down to the currency's unit --------------------------------------------------------

def expected_return(bet_type: str, stake: Decimal, outcome: str, multiplier: Decimal, unit: Decimal) -> Decimal:
    """floor(stake × multiplier / unit) × unit for a win, the stake for a push, nothing for a loss,
    in integers: independent of the engine's quantize."""
    kind = settlement_kind(bet_type, outcome)
    if kind == "LOSE":
        return Decimal(0)
    if kind == "PUSH":
        return stake
    units = int(stake * multiplier / unit)  # exact: Decimal division of exact decimals, truncated
    return units * unit


@hypothesis_settings(max_examples=300, deadline=None)
@given(places=st.integers(0, 8), digits=st.integers(1, 10 ** 12),
       multiplier=st.decimals(MIN_MULTIPLIER, MAX_MULTIPLIER, places=4),
       bet_type=st.sampled_from(BetType.ALL), outcome=st.sampled_from(Outcome.ALL))
@example(places=3, digits=1001, multiplier=Decimal("1.95"), bet_type="BANKER", outcome="BANKER")
def test_a_payout_is_the_floor_of_stake_times_multiplier_to_the_unit(places, digits, multiplier, bet_type, outcome):
    unit = Decimal(1).scaleb(-places)
    stake = Decimal(digits).scaleb(-places)
    paid = bet_return(bet_type, stake, outcome, multiplier, unit)
    assert paid == expected_return(bet_type, stake, outcome, multiplier, unit)
    assert paid == paid.quantize(unit) and paid <= stake * multiplier


def test_a_kwd_payout_rounds_down_to_the_fils(operator, integration):
    kwd = table(operator, "kwd-table", "KWD", "0.500", "1000")
    account(operator, "kwd-player", "KWD", "100")
    round_ = game_services.round_open(game_id=kwd.pk, actor=integration)
    for bet_type in BetType.ALL:
        game_services.bet_place(round_id=round_.pk, account_external_id="kwd-player", bet_type=bet_type,
                                stake="1.001", idempotency_key=f"k-{bet_type}", client=integration)
    game_services.round_deal(round_id=round_.pk, actor=integration)
    settlement_services.settlement_run(round_ids=[round_.pk])
    round_.refresh_from_db()
    paid = {bet.bet_type: bet.payout for bet in Bet.objects.filter(round=round_)}
    winner = {"PLAYER": "PLAYER", "BANKER": "BANKER", "TIE": "TIE"}[round_.outcome]
    # 1.001 × 1.95 = 1.95195 → 1.951; × 2 = 2.002; × 9 = 9.009: each to the fils, rounded down.
    assert paid[winner] == {"PLAYER": Decimal("2.002"), "BANKER": Decimal("1.951"), "TIE": Decimal("9.009")}[winner]


def test_a_settlement_batch_of_four_currencies_pays_each_exactly(operator, integration, crypto):
    stakes = {"JPY": "101", "KWD": "1.001", "USD": "10.01", "BTC": "0.00000103"}
    limits = {"JPY": ("100", "100000"), "KWD": ("0.5", "1000"), "USD": ("1", "1000"), "BTC": ("0.00000001", "1")}
    games, rounds = {}, []
    for currency, stake in stakes.items():
        games[currency] = table(operator, f"t-{currency.lower()}", currency, *limits[currency])
        account(operator, f"p-{currency.lower()}", currency, "5000")
        for _ in range(4):
            round_ = game_services.round_open(game_id=games[currency].pk, actor=integration)
            for bet_type in BetType.ALL:
                game_services.bet_place(round_id=round_.pk, account_external_id=f"p-{currency.lower()}",
                                        bet_type=bet_type, stake=stake, client=integration,
                                        idempotency_key=f"{currency}-{round_.pk}-{bet_type}")
            game_services.round_deal(round_id=round_.pk, actor=integration)
            rounds.append(round_.pk)
    batch = settlement_services.settlement_run(round_ids=rounds, limit=len(rounds))
    assert batch.rounds == len(rounds) and batch.bets == len(rounds) * 3
    for bet in Bet.objects.select_related("round__game"):
        currency = bet.round.game.currency
        assert bet.payout == expected_return(bet.bet_type, Decimal(stakes[currency]), bet.round.outcome,
                                             DEFAULT_MULTIPLIERS.for_bet(bet.bet_type), minor_unit(currency))
    # Each game's aggregates in its own minor units; the dashboard of each currency adds its own only.
    for currency, game in games.items():
        bets = list(Bet.objects.filter(round__game=game))
        handle = sum(bet.stake for bet in bets)
        paid = sum(bet.payout for bet in bets)
        rows = DailyBetTotals.objects.filter(game=game)
        per_unit = 10 ** places_of(currency)
        assert sum(row.handle_cents for row in rows) == handle * per_unit
        assert sum(row.paid_out_cents for row in rows) == paid * per_unit
        day = rows.first().day
        board = reports.dashboard(start=day, end=day, currency=currency)
        assert [row.slug for row in board.per_game] == [game.slug]
        assert board.overall.handle == handle and board.overall.paid_out == paid
        assert board.overall.handle.as_tuple().exponent == -places_of(currency)
        assert 0.5 < board.overall.theoretical_rtp < 1


def test_a_stake_stored_before_the_currency_rule_counts_rounded_on_its_own(operator, integration, yen_table,
                                                                          yen_player):
    """A yen stake of 100.50 (taken by a release before the currency's places were a rule) counts as
    101 yen in the aggregates whether its batch adds it or a rebuild does: each amount is rounded on
    its own, so two of them are 202, never the 201 their sum rounds to."""
    rounds = []
    for index in range(2):  # one batch each: each batch adds its bet alone
        round_ = game_services.round_open(game_id=yen_table.pk, actor=integration)
        game_services.bet_place(round_id=round_.pk, account_external_id="yen-player", bet_type="TIE",
                                stake="101", idempotency_key=f"old-{index}", client=integration)
        Bet.objects.filter(round=round_).update(stake=Decimal("100.50"))
        game_services.round_deal(round_id=round_.pk, actor=integration)
        rounds.append(round_.pk)
    for round_id in rounds:
        settlement_services.settlement_run(round_ids=[round_id])
    assert sum(DailyBetTotals.objects.filter(game=yen_table).values_list("handle_cents", flat=True)) == 202
    assert all(table.agrees for table in aggregates.check())
    aggregates.rebuild()
    assert sum(DailyBetTotals.objects.filter(game=yen_table).values_list("handle_cents", flat=True)) == 202


def test_an_adjustment_has_the_account_currencys_places(operator):
    account(operator, "yen", "JPY", "1000")
    with pytest.raises(ValidationError) as refused:
        wallet_services.account_adjust(external_id="yen", actor=operator, amount="0.50", reason="x")
    assert set(refused.value.message_dict) == {"amount"}


def test_the_api_writes_money_at_the_currency_places(as_operator, yen_player, operator):
    assert as_operator.get(f"{API}/accounts/yen-player/").json()["balance"] == "100000"
    account(operator, "dinar", "KWD", "1.5")
    assert as_operator.get(f"{API}/accounts/dinar/").json()["balance"] == "1.500"
