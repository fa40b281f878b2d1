"""Bets: placing (with idempotency), every rejected bet writing nothing, and the filtered list."""

import json
from decimal import Decimal

import pytest

from games import services
from games.choices import GameStatus
from games.models import Bet
from tests.api.helpers import API, assert_names_field
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry

pytestmark = pytest.mark.django_db


def bet_body(**overrides):
    return {"account": "player-1", "bet_type": "BANKER", "stake": "10.01", "idempotency_key": "key-1",
            **overrides}


def place(client, round_, **overrides):
    return client.post(f"{API}/rounds/{round_.pk}/bets/", bet_body(**overrides))


class TestPlace:
    def test_accepts_debits_and_records_the_multiplier_in_force(self, as_integration, open_round, player):
        response = place(as_integration, open_round)
        assert response.status_code == 201, response.content
        body = response.json()
        bet = Bet.objects.get()
        assert body == {**body, "id": bet.pk, "round": open_round.pk, "game": "main-table", "account": "player-1",
                        "bet_type": "BANKER", "stake": "10.01", "multiplier": "1.9500", "status": "PENDING",
                        "payout": None, "idempotency_key": "key-1", "client": "game-server", "settled_at": None}
        player.refresh_from_db()
        assert player.balance == Decimal("489.99")
        stake = LedgerEntry.objects.get(kind=LedgerKind.STAKE)
        assert (stake.bet_id, stake.amount, stake.balance_after) == (bet.pk, Decimal("-10.01"), Decimal("489.99"))

    def test_a_json_number_stake_is_read_exactly(self, as_integration, open_round, player):
        response = place(as_integration, open_round, stake=10.1)
        assert response.status_code == 201
        assert response.json()["stake"] == "10.10"

    def test_a_later_configuration_change_does_not_alter_an_accepted_bet(self, as_integration, as_operator,
                                                                        open_round, player):
        bet_id = place(as_integration, open_round).json()["id"]
        as_operator.patch(f"{API}/games/main-table/", {"banker_multiplier": "1.9", "reason": "margin"})
        assert as_integration.get(f"{API}/bets/{bet_id}/").json()["multiplier"] == "1.9500"


class TestIdempotency:
    def test_a_replay_returns_the_original_bet_and_debits_once(self, as_integration, open_round, player):
        first = place(as_integration, open_round)
        assert first.status_code == 201
        for _ in range(2):
            again = place(as_integration, open_round)
            assert again.status_code == 200
            assert again.json() == first.json()
        assert Bet.objects.count() == 1
        assert LedgerEntry.objects.filter(kind=LedgerKind.STAKE).count() == 1
        player.refresh_from_db()
        assert player.balance == Decimal("489.99")

    @pytest.mark.parametrize("field,sent", [
        ("idempotency_key", "key-1\t"), ("idempotency_key", "\nkey-1"), ("idempotency_key", "key-1\u3000"),
        ("idempotency_key", "\x1fkey-1"), ("idempotency_key", "key-1\u2028"), ("idempotency_key", "key-1\x85"),
        ("account", "player-1 "), ("account", "\x1cplayer-1"), ("account", "player-1\u3000"),
    ])
    def test_a_key_or_account_is_taken_as_sent_not_trimmed_into_another(self, as_integration, open_round, player,
                                                                        unchanged, field, sent):
        # Trimmed, "key-1\t" would be a replay of key-1 (a bet lost as a duplicate) and "player-1 " would
        # debit player-1: each is refused instead, naming the field, and writes nothing.
        assert place(as_integration, open_round).status_code == 201
        with unchanged():
            response = place(as_integration, open_round, **{"idempotency_key": "key-2", field: sent})
        assert_names_field(response, 400, field)

    def test_an_equal_stake_written_differently_is_the_same_content(self, as_integration, open_round, player):
        first = place(as_integration, open_round, stake="10.5")
        again = place(as_integration, open_round, stake="10.50")
        assert (first.status_code, again.status_code) == (201, 200)
        assert again.json()["id"] == first.json()["id"]

    def test_a_replay_after_the_deal_still_returns_the_original(self, as_integration, open_round, player,
                                                               integration):
        first = place(as_integration, open_round)
        services.round_deal(round_id=open_round.pk, actor=integration)
        again = place(as_integration, open_round)
        assert again.status_code == 200 and again.json()["id"] == first.json()["id"]

    @pytest.mark.parametrize("change", [
        {"stake": "10.02"}, {"bet_type": "PLAYER"}, {"account": "player-2"},
    ])
    def test_the_same_key_with_other_content_is_409_and_writes_nothing(self, as_integration, open_round,
                                                                       player, funded_account, unchanged, change):
        funded_account("player-2", "100.00")
        assert place(as_integration, open_round).status_code == 201
        with unchanged():
            response = place(as_integration, open_round, **change)
        assert_names_field(response, 409, "idempotency_key")

    def test_the_same_key_on_another_round_is_409(self, as_integration, open_round, player, game, integration,
                                                  unchanged):
        assert place(as_integration, open_round).status_code == 201
        other = services.round_open(game_id=game.pk, actor=integration)
        with unchanged():
            response = place(as_integration, other)
        assert_names_field(response, 409, "idempotency_key")

    def test_keys_are_per_client(self, as_integration, as_admin, open_round, player):
        mine = place(as_integration, open_round)
        theirs = place(as_admin, open_round)
        assert (mine.status_code, theirs.status_code) == (201, 201)
        assert mine.json()["id"] != theirs.json()["id"]


class TestRejected:
    @pytest.mark.parametrize("field,value", [
        ("stake", "0"),
        ("stake", "0.00"),
        ("stake", "-5.00"),
        ("stake", "10.001"),             # more than 2 decimal places
        ("stake", 10.001),
        ("stake", "abc"),
        ("stake", "NaN"),
        ("stake", "Infinity"),
        ("stake", ""),
        ("stake", None),
        ("stake", True),
        ("stake", "0.99"),               # below the game's min_bet 1.00
        ("stake", "1000.01"),            # above the game's max_bet 1000.00
        ("stake", "500.01"),             # above the balance 500.00 (within the limits)
        ("bet_type", "DRAGON"),
        ("bet_type", "player"),
        ("bet_type", ""),
        ("bet_type", None),
        ("account", "nobody-here"),      # unknown account
        ("account", ""),
        ("account", "x" * 101),
        ("idempotency_key", ""),
        ("idempotency_key", "   "),
        ("idempotency_key", "k" * 101),
    ])
    def test_bad_input_is_400_naming_the_field_and_writes_nothing(self, as_integration, open_round, player,
                                                                   unchanged, field, value):
        with unchanged():
            response = place(as_integration, open_round, **{field: value})
        assert_names_field(response, 400, field)

    @pytest.mark.parametrize("field", ["account", "bet_type", "stake", "idempotency_key"])
    def test_every_field_is_required(self, as_integration, open_round, player, unchanged, field):
        body = bet_body()
        del body[field]
        with unchanged():
            response = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", body)
        assert_names_field(response, 400, field)

    def test_an_account_in_another_currency_is_refused(self, as_integration, open_round, funded_account,
                                                       unchanged):
        funded_account("euro-player", "100.00", currency="EUR")
        with unchanged():
            response = place(as_integration, open_round, account="euro-player")
        assert_names_field(response, 400, "account")

    def test_the_exact_balance_is_accepted(self, as_integration, open_round, funded_account):
        funded_account("all-in", "25.00")
        assert place(as_integration, open_round, account="all-in", stake="25.00").status_code == 201

    def test_a_non_finite_json_literal_is_400_naming_the_field(self, as_integration, open_round, player,
                                                               unchanged):
        raw = json.dumps(bet_body())[:-1] + ', "stake": Infinity}'
        with unchanged():
            response = as_integration.generic("POST", f"{API}/rounds/{open_round.pk}/bets/", raw,
                                              content_type="application/json")
        assert_names_field(response, 400, "stake")

    def test_malformed_json_is_400(self, as_integration, open_round, player, unchanged):
        with unchanged():
            response = as_integration.generic("POST", f"{API}/rounds/{open_round.pk}/bets/",
                                              '{"stake": "10"', content_type="application/json")
        assert_names_field(response, 400, "detail")

    def test_an_unknown_field_is_400(self, as_integration, open_round, player, unchanged):
        with unchanged():
            response = place(as_integration, open_round, multiplier="100")
        assert_names_field(response, 400, "multiplier")

    def test_a_dealt_round_takes_no_bets(self, as_integration, open_round, player, integration, unchanged):
        services.round_deal(round_id=open_round.pk, actor=integration)
        with unchanged():
            response = place(as_integration, open_round)
        assert_names_field(response, 409, "round")

    def test_a_void_round_takes_no_bets(self, as_integration, open_round, player, operator, unchanged):
        services.round_void(round_id=open_round.pk, actor=operator, reason="fault")
        with unchanged():
            response = place(as_integration, open_round)
        assert_names_field(response, 409, "round")

    @pytest.mark.parametrize("status", [GameStatus.SUSPENDED, GameStatus.RETIRED])
    def test_a_game_that_is_not_active_takes_no_bets(self, as_integration, open_round, player, operator,
                                                     unchanged, status):
        services.game_update(game_id=open_round.game_id, actor=operator, reason="closing",
                             changes={"status": status})
        with unchanged():
            response = place(as_integration, open_round)
        assert_names_field(response, 409, "round")


class TestList:
    @pytest.fixture
    def bets(self, game, operator, integration, funded_account):
        other_game = services.game_create(actor=operator, slug="side-table", name="Side", min_bet=1, max_bet=10)
        alice = funded_account("alice", "1000.00")
        bob = funded_account("bob", "1000.00")
        first = services.round_open(game_id=game.pk, actor=integration)
        second = services.round_open(game_id=game.pk, actor=integration)
        side = services.round_open(game_id=other_game.pk, actor=integration)
        made = []
        for index, (round_, account) in enumerate([(first, alice), (first, bob), (second, alice),
                                                   (side, bob), (side, alice)]):
            bet, _ = services.bet_place(round_id=round_.pk, account_external_id=account.external_id,
                                        bet_type="PLAYER", stake="5.00", idempotency_key=f"k{index}",
                                        client=integration)
            made.append(bet)
        services.round_void(round_id=second.pk, actor=operator, reason="fault")
        return {"bets": made, "first": first, "second": second, "side": side}

    def ids(self, client, **params):
        response = client.get(f"{API}/bets/", params)
        assert response.status_code == 200, response.content
        return [item["id"] for item in response.json()["results"]]

    def test_newest_first(self, as_support, bets):
        assert self.ids(as_support) == [bet.pk for bet in reversed(bets["bets"])]

    def test_filters(self, as_support, bets):
        made = bets["bets"]
        assert self.ids(as_support, round=bets["first"].pk) == [made[1].pk, made[0].pk]
        assert self.ids(as_support, account="bob") == [made[3].pk, made[1].pk]
        assert self.ids(as_support, status="REFUNDED") == [made[2].pk]
        assert self.ids(as_support, game="side-table") == [made[4].pk, made[3].pk]
        assert self.ids(as_support, game="main-table", account="alice", status="PENDING") == [made[0].pk]
        assert self.ids(as_support, account="nobody") == []

    def test_pages(self, as_support, bets):
        body = as_support.get(f"{API}/bets/", {"page_size": 3}).json()
        assert len(body["results"]) == 3 and body["next"]
        rest = as_support.get(body["next"]).json()
        assert len(rest["results"]) == 2 and rest["next"] is None

    @pytest.mark.parametrize("params,field", [
        ({"round": "abc"}, "round"), ({"round": "0"}, "round"), ({"status": "WINNING"}, "status"),
        ({"game": "bad slug!"}, "game"),
    ])
    def test_rejects_bad_filters(self, as_support, params, field):
        assert_names_field(as_support.get(f"{API}/bets/", params), 400, field)

    def test_detail(self, as_support, bets):
        bet = bets["bets"][0]
        body = as_support.get(f"{API}/bets/{bet.pk}/").json()
        assert body["id"] == bet.pk and body["account"] == "alice" and body["stake"] == "5.00"
        assert as_support.get(f"{API}/bets/999999/").status_code == 404
