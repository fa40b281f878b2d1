"""Game instances: create, list, read, change (with a reason), odds; and every bad input."""

import json
from decimal import Decimal

import pytest

from audit.models import AuditEvent
from games.engine import Multipliers, odds_report
from games.models import GameInstance, SeedPair
from tests.api.helpers import API, assert_names_field

# Creating a game itself (four eyes on creation: tests/api/test_approvals.py).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("games_created_at_once")]

NEW_GAME = {"slug": "vip", "name": "VIP table", "min_bet": "5.00", "max_bet": "5000.00"}


def create(client, **overrides):
    return client.post(f"{API}/games/", {**NEW_GAME, **overrides})


class TestCreate:
    def test_creates_with_defaults_and_a_committed_seed_pair(self, as_operator, operator):
        response = create(as_operator, client_seed="my-seed")
        assert response.status_code == 201, response.content
        body = response.json()
        assert body == {
            **body,
            "slug": "vip", "name": "VIP table", "status": "active", "decks": 8,
            "player_multiplier": "2.0000", "banker_multiplier": "1.9500", "tie_multiplier": "9.0000",
            "min_bet": "5.00", "max_bet": "5000.00", "currency": "USD",
        }
        assert "client_seed" not in body
        game = GameInstance.objects.get(slug="vip")
        pair = SeedPair.objects.get(game=game)
        assert pair.client_seed == "my-seed" and pair.revealed_at is None
        assert AuditEvent.objects.filter(action="game.created", actor=operator.username).exists()

    def test_accepts_json_numbers_for_decimals(self, as_operator):
        response = create(as_operator, slug="numbers", tie_multiplier=8.5, min_bet=1, max_bet=10.5, decks=6)
        assert response.status_code == 201, response.content
        assert response.json()["tie_multiplier"] == "8.5000"
        assert response.json()["max_bet"] == "10.50"

    @pytest.mark.parametrize("field,value", [
        ("player_multiplier", "0.9999"),       # below 1.0
        ("banker_multiplier", "1000.0001"),    # above the bound
        ("tie_multiplier", "1001"),
        ("tie_multiplier", "abc"),             # not a number
        ("tie_multiplier", "NaN"),
        ("tie_multiplier", "nan"),
        ("tie_multiplier", "sNaN"),
        ("banker_multiplier", "Infinity"),
        ("banker_multiplier", "-Infinity"),
        ("player_multiplier", "inf"),
        ("player_multiplier", "1.23456"),      # five decimal places
        ("player_multiplier", 1.23456),        # the same as a JSON number
        ("player_multiplier", "-2"),
        ("player_multiplier", ""),
        ("player_multiplier", None),
        ("player_multiplier", True),
        ("player_multiplier", [2]),
        ("decks", 0),
        ("decks", 9),
        ("decks", "eight"),
        ("min_bet", "0"),
        ("min_bet", "-1.00"),
        ("min_bet", "1.001"),
        ("max_bet", "1.00"),                   # below min_bet 5.00
        ("currency", "usd"),
        ("currency", "EURO"),
        ("status", "paused"),
        ("slug", "not a slug"),
        ("slug", "main-table"),                # already taken
        ("name", ""),
        ("client_seed", ""),
        ("client_seed", "x" * 65),
        ("client_seed", "tab\there"),
        ("client_seed", "';touch x;'"),
        ("client_seed", "é"),
    ])
    def test_rejects_bad_input_naming_the_field_and_writes_nothing(self, as_operator, game, unchanged,
                                                                   field, value):
        with unchanged():
            response = create(as_operator, **{field: value})
        assert_names_field(response, 400, field)

    @pytest.mark.parametrize("field", ["slug", "name", "min_bet", "max_bet"])
    def test_requires_fields(self, as_operator, unchanged, field):
        body = dict(NEW_GAME)
        del body[field]
        with unchanged():
            response = as_operator.post(f"{API}/games/", body)
        assert_names_field(response, 400, field)

    def test_rejects_unknown_and_read_only_fields(self, as_operator, unchanged):
        with unchanged():
            response = create(as_operator, tie_multipler="8", created_at="2020-01-01T00:00:00Z")
        assert response.status_code == 400
        assert response.json() == {"created_at": ["This field cannot be changed."],
                                   "tie_multipler": ["Unknown field."]}

    @pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
    def test_rejects_non_finite_json_literals_naming_the_field(self, as_operator, unchanged, literal):
        raw = json.dumps(NEW_GAME)[:-1] + f', "tie_multiplier": {literal}}}'
        with unchanged():
            response = as_operator.generic("POST", f"{API}/games/", raw, content_type="application/json")
        assert_names_field(response, 400, "tie_multiplier")

    def test_rejects_malformed_json_with_a_json_body(self, as_operator, unchanged):
        with unchanged():
            response = as_operator.generic("POST", f"{API}/games/", '{"slug": "vip",',
                                           content_type="application/json")
        assert_names_field(response, 400, "detail")
        assert response.json()["detail"].startswith("JSON parse error")

    def test_rejects_a_body_that_is_not_an_object(self, as_operator, unchanged):
        with unchanged():
            response = as_operator.post(f"{API}/games/", [NEW_GAME])
        assert_names_field(response, 400, "non_field_errors")

    def test_rejects_form_encoded_bodies(self, as_operator, unchanged):
        with unchanged():
            response = as_operator.post(f"{API}/games/", NEW_GAME, format="multipart")
        assert response.status_code == 415
        assert "detail" in response.json()


class TestRead:
    def test_list_is_paginated_by_slug(self, as_support, game, operator):
        from games import services

        for slug in ("b-table", "a-table"):
            services.game_create(actor=operator, slug=slug, name=slug, min_bet=Decimal(1), max_bet=Decimal(10))
        response = as_support.get(f"{API}/games/", {"page_size": 2})
        assert response.status_code == 200
        body = response.json()
        assert [game["slug"] for game in body["results"]] == ["a-table", "b-table"]
        assert body["next"] and body["previous"] is None
        following = as_support.get(body["next"]).json()
        assert [game["slug"] for game in following["results"]] == ["main-table"]
        assert following["next"] is None

    def test_detail(self, as_support, game):
        response = as_support.get(f"{API}/games/main-table/")
        assert response.status_code == 200
        assert response.json()["min_bet"] == "1.00"

    def test_unknown_slug_is_404(self, as_support):
        response = as_support.get(f"{API}/games/nope/")
        assert response.status_code == 404
        assert "detail" in response.json()


class TestChange:
    def test_changes_with_a_reason_through_the_service(self, as_operator, game, operator):
        response = as_operator.patch(f"{API}/games/main-table/",
                                     {"tie_multiplier": "8.5", "status": "suspended", "reason": "promo"})
        assert response.status_code == 200, response.content
        assert response.json()["tie_multiplier"] == "8.5000"
        assert response.json()["status"] == "suspended"
        game.refresh_from_db()
        assert game.tie_multiplier == Decimal("8.5")
        event = AuditEvent.objects.get(action="game.configured")
        assert event.reason == "promo" and event.actor == operator.username
        assert event.after == {"tie_multiplier": "8.5000"}

    def test_a_change_of_limits_is_checked_against_the_stored_values(self, as_operator, game, unchanged):
        with unchanged():
            response = as_operator.patch(f"{API}/games/main-table/", {"max_bet": "0.50", "reason": "x"})
        assert_names_field(response, 400, "max_bet")

    @pytest.mark.parametrize("body", [
        {"tie_multiplier": "8"},
        {"tie_multiplier": "8", "reason": ""},
        {"tie_multiplier": "8", "reason": "   "},
        {"tie_multiplier": "8", "reason": None},
    ])
    def test_requires_a_reason(self, as_operator, game, unchanged, body):
        with unchanged():
            response = as_operator.patch(f"{API}/games/main-table/", body)
        assert_names_field(response, 400, "reason")

    @pytest.mark.parametrize("field,value", [
        ("player_multiplier", "0.5"),
        ("banker_multiplier", "1000.5"),
        ("tie_multiplier", "NaN"),
        ("tie_multiplier", "Infinity"),
        ("tie_multiplier", "x"),
        ("tie_multiplier", "9.00001"),
        ("decks", 9),
        ("min_bet", "0.00"),
        ("currency", "us"),
        ("status", "gone"),
    ])
    def test_rejects_bad_values_and_writes_nothing(self, as_operator, game, unchanged, field, value):
        with unchanged():
            response = as_operator.patch(f"{API}/games/main-table/", {field: value, "reason": "because"})
        assert_names_field(response, 400, field)

    def test_slug_cannot_change(self, as_operator, game, unchanged):
        with unchanged():
            response = as_operator.patch(f"{API}/games/main-table/", {"slug": "other", "reason": "rename"})
        assert_names_field(response, 400, "slug")

    def test_unknown_game_is_404(self, as_operator):
        response = as_operator.patch(f"{API}/games/nope/", {"tie_multiplier": "8", "reason": "x"})
        assert response.status_code == 404

    def test_put_is_not_allowed(self, as_operator, game):
        response = as_operator.put(f"{API}/games/main-table/", {**NEW_GAME, "reason": "x"})
        assert response.status_code == 405


class TestOdds:
    def test_default_eight_decks_match_the_engine_and_the_specification(self, as_support, game):
        response = as_support.get(f"{API}/games/main-table/odds/")
        assert response.status_code == 200
        body = response.json()
        assert {name: value for name, value in body.items() if name not in ("bets", "deals")} == {
            **odds_report(8, Multipliers()), "policy": None}
        assert body["decks"] == 8
        # The main bets by the exact counts too: the same probabilities, and no side bet until offered.
        assert set(body["bets"]) == {"PLAYER", "BANKER", "TIE"}
        assert body["bets"]["BANKER"]["rtp"] == body["rtp"]["banker"]
        assert round(body["probabilities"]["banker"], 6) == 0.458597
        assert round(body["probabilities"]["player"], 6) == 0.446247
        assert round(body["probabilities"]["tie"], 6) == 0.095156
        assert round(body["rtp"]["banker"], 5) == 0.98942
        assert round(body["rtp"]["player"], 4) == 0.9876
        assert round(body["rtp"]["tie"], 4) == 0.8564

    def test_follow_the_current_configuration(self, as_operator, game):
        as_operator.patch(f"{API}/games/main-table/", {"decks": 1, "tie_multiplier": "8", "reason": "single deck"})
        body = as_operator.get(f"{API}/games/main-table/odds/").json()
        assert {name: value for name, value in body.items() if name not in ("bets", "deals")} == {
            **odds_report(1, Multipliers(Decimal("2"), Decimal("1.95"), Decimal("8"))), "policy": None}
        assert body["decks"] == 1
        assert body["deals"] == 52 * 51 * 50 * 49 * 48 * 47
        assert body["bets"]["TIE"]["rtp"] == body["rtp"]["tie"]

    def test_unknown_game_is_404(self, as_support):
        assert as_support.get(f"{API}/games/nope/odds/").status_code == 404
