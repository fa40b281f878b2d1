"""Input read exactly as sent: money and multipliers never through a binary float, ASCII digits only,
bounded JSON nesting, no text the database cannot store, and idempotency keys of visible ASCII."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from games import services
from games.models import Bet
from tests.api.helpers import API, assert_names_field

# Games created at once: what is read here is the input (four eyes on creation: tests/api/test_approvals.py).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("games_created_at_once")]


def post_raw(client, url, raw: str):
    return client.generic("POST", url, raw, content_type="application/json")


def game_body(**overrides):
    return {"slug": "vip", "name": "VIP", "min_bet": "5.00", "max_bet": "500.00", **overrides}


def bet_body(**overrides):
    return {"account": "player-1", "bet_type": "BANKER", "stake": "10.00", "idempotency_key": "key-1", **overrides}


class TestExactDecimals:
    def test_a_json_number_below_one_is_not_rounded_up_to_a_valid_multiplier(self, as_operator, game, unchanged):
        raw = json.dumps(game_body())[:-1] + ', "banker_multiplier": 0.99999999999999999}'
        with unchanged():
            response = post_raw(as_operator, f"{API}/games/", raw)
        assert_names_field(response, 400, "banker_multiplier")

    def test_a_stake_with_hidden_places_is_refused_not_rounded(self, as_integration, open_round, player, unchanged):
        raw = json.dumps(bet_body())[:-1] + ', "stake": 10.009999999999999999}'
        raw = raw.replace('"stake": "10.00", ', "")
        with unchanged():
            response = post_raw(as_integration, f"{API}/rounds/{open_round.pk}/bets/", raw)
        assert_names_field(response, 400, "stake")

    @pytest.mark.parametrize("text", ["１０", "1_000", "1e2", " 1 0", "+5", "٥", "0x10", "10."])
    def test_only_ascii_decimal_text_is_money(self, as_integration, as_operator, open_round, player, unchanged, text):
        with unchanged():
            bet = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", bet_body(stake=text))
            game = as_operator.post(f"{API}/games/", game_body(min_bet=text))
            multiplier = as_operator.post(f"{API}/games/", game_body(tie_multiplier=text))
            adjust = as_operator.post(f"{API}/accounts/player-1/adjust/", {"amount": text, "reason": "x"})
        assert_names_field(bet, 400, "stake")
        assert_names_field(game, 400, "min_bet")
        assert_names_field(multiplier, 400, "tie_multiplier")
        assert_names_field(adjust, 400, "amount")

    def test_an_exact_json_number_is_still_read_exactly(self, as_operator):
        raw = json.dumps(game_body())[:-1] + ', "tie_multiplier": 8.1234}'
        response = post_raw(as_operator, f"{API}/games/", raw)
        assert response.status_code == 201, response.content
        assert response.json()["tie_multiplier"] == "8.1234"


class TestJsonShape:
    def test_deep_nesting_is_a_400_not_a_recursion_error(self, as_operator, unchanged):
        raw = "[" * 1000 + "]" * 1000
        assert len(raw) == 2000
        with unchanged():
            response = post_raw(as_operator, f"{API}/games/", raw)
        assert response.status_code == 400
        assert "nested deeper" in response.json()["detail"]

    def test_far_deeper_nesting_than_the_recursion_limit_is_a_400(self, as_operator, unchanged):
        with unchanged():
            response = post_raw(as_operator, f"{API}/games/", '{"a":' * 100_000 + "1" + "}" * 100_000)
        assert response.status_code == 400
        assert response["Content-Type"].startswith("application/json")

    def test_nesting_within_the_limit_is_parsed(self, as_operator):
        raw = json.dumps({**game_body(), "name": "VIP"})
        assert post_raw(as_operator, f"{API}/games/", raw).status_code == 201

    @pytest.mark.parametrize("text", ["nul\\u0000here", "lone\\ud800surrogate"])
    def test_text_the_database_cannot_store_is_refused_naming_the_field(self, as_operator, unchanged, text):
        raw = json.dumps(game_body())[:-1] + f', "client_seed": "{text}"}}'
        with unchanged():
            response = post_raw(as_operator, f"{API}/games/", raw)
        assert_names_field(response, 400, "client_seed")


BAD_KEYS = ["new\nline", "tab\tkey", "bell\x07", "bidi\u202eoverride", "space key", "é", "k" * 101, "\x7f"]


class TestIdempotencyKeys:
    @pytest.mark.parametrize("key", BAD_KEYS)
    def test_the_api_refuses_keys_outside_visible_ascii(self, as_integration, open_round, player, unchanged, key):
        with unchanged():
            response = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", bet_body(idempotency_key=key))
        assert_names_field(response, 400, "idempotency_key")

    @pytest.mark.parametrize("key", BAD_KEYS)
    def test_the_service_refuses_them_too(self, integration, open_round, player, key):
        with pytest.raises(ValidationError) as error:
            services.bet_place(round_id=open_round.pk, account_external_id="player-1", bet_type="BANKER",
                               stake="10.00", idempotency_key=key, client=integration)
        assert "idempotency_key" in error.value.message_dict
        assert not Bet.objects.exists()

    def test_every_visible_ascii_character_is_a_key(self, as_integration, open_round, player):
        key = "".join(chr(code) for code in range(0x21, 0x7F))
        response = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", bet_body(idempotency_key=key))
        assert response.status_code == 201, response.content

    def test_the_model_and_the_database_refuse_them(self, integration, open_round, player):
        bet, _created = services.bet_place(round_id=open_round.pk, account_external_id="player-1",
                                           bet_type="BANKER", stake="10.00", idempotency_key="ok",
                                           client=integration)
        bet.idempotency_key = "bad\nkey"
        with pytest.raises(ValidationError) as error:
            bet.full_clean()
        assert "idempotency_key" in error.value.message_dict
        with pytest.raises(IntegrityError), transaction.atomic():
            Bet.objects.filter(pk=bet.pk).update(idempotency_key="bad\u202ekey")
