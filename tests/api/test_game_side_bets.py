"""A game's side bets through the API: created and changed with their paytables, stored as decimal
text, refused naming the field when malformed or above the RTP ceiling, and shown with their exact
odds; a bet on a side bet the game does not offer is a 400 naming bet_type."""

import json
from decimal import Decimal

import pytest

from games.engine import BET_TYPES, REGISTRY, SIDE_BET_TYPES, bet_odds, bet_rtp, make_paytable
from games.models import Bet, GameInstance
from tests.api.helpers import API, assert_names_field
from tests.games.engine.side_bet_oracle import EVENT_OF

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("games_created_at_once")]

NEW_GAME = {"slug": "vip", "name": "VIP table", "min_bet": "5.00", "max_bet": "5000.00", "decks": 6}
PAIRS = {"PLAYER_PAIR": {"PAIR": "12"}, "DRAGON_BONUS_BANKER": {"NATURAL_WIN": "2", "WIN_BY_9": "31"}}


def test_a_game_is_created_with_side_bets_stored_as_decimal_text(as_operator):
    response = as_operator.post(f"{API}/games/", {**NEW_GAME, "side_bets": PAIRS})
    assert response.status_code == 201, response.content
    stored = GameInstance.objects.get(slug="vip").side_bets
    # The push of the Dragon Bonus is written out at 1: the paytable a bet carries says everything.
    assert stored == {"PLAYER_PAIR": {"PAIR": "12"},
                      "DRAGON_BONUS_BANKER": {"NATURAL_WIN": "2", "WIN_BY_9": "31", "NATURAL_TIE": "1"}}
    assert response.json()["side_bets"] == stored


def test_a_json_number_with_an_exponent_is_stored_as_plain_decimal_text(as_operator, game):
    raw = '{"side_bets": {"PLAYER_PAIR": {"PAIR": 1.2e1}}, "reason": "written with an exponent"}'
    response = as_operator.generic("PATCH", f"{API}/games/{game.slug}/", raw, content_type="application/json")
    assert response.status_code == 200, response.content
    assert GameInstance.objects.get(pk=game.pk).side_bets == {"PLAYER_PAIR": {"PAIR": "12"}}


@pytest.mark.parametrize("text", ["1.2e1", "NaN", "1_2", "١٢", "12 pounds"])
def test_a_multiplier_as_text_is_plain_decimal_text_as_for_the_main_bets(as_operator, game, unchanged, text):
    with unchanged():
        response = as_operator.patch(f"{API}/games/{game.slug}/", {"side_bets": {"PLAYER_PAIR": {"PAIR": text}},
                                                                   "reason": "written oddly"}, format="json")
    assert_names_field(response, 400, "side_bets")
    assert "PLAYER_PAIR.PAIR: must be a decimal number written in ASCII digits" in str(response.json())
    main = as_operator.patch(f"{API}/games/{game.slug}/", {"tie_multiplier": text, "reason": "written oddly"},
                             format="json")
    assert_names_field(main, 400, "tie_multiplier")


def test_json_numbers_are_read_exactly_and_stored_as_text(as_operator):
    raw = json.dumps(NEW_GAME)[:-1] + ', "side_bets": {"BANKER_PAIR": {"PAIR": 11.5000}}}'
    response = as_operator.generic("POST", f"{API}/games/", raw, content_type="application/json")
    assert response.status_code == 201, response.content
    assert GameInstance.objects.get(slug="vip").side_bets == {"BANKER_PAIR": {"PAIR": "11.5000"}}


@pytest.mark.parametrize("side_bets", [
    [],
    "PLAYER_PAIR",
    {"PLAYER": {"PLAYER": "2"}},
    {"PLAYER_PAIR": {"PAIR": "0.99"}},
    {"PLAYER_PAIR": {"PAIR": "12.00001"}},
    {"PLAYER_PAIR": {"PAIR": "1000.0001"}},
    {"PLAYER_PAIR": {"PAIR": "twelve"}},
    {"PLAYER_PAIR": {"PAIR": None}},
    {"PLAYER_PAIR": {"PAIR": True}},
    {"PLAYER_PAIR": {"PAIRS": "12"}},
    {"PLAYER_PAIR": ["12"]},
    {"PLAYER_PAIR": {}},
    {"DRAGON_BONUS_PLAYER": {"NATURAL_TIE": "2", "WIN_BY_9": "31"}},
    {"PLAYER_PAIR\u0000": {"PAIR": "12"}},
    {"PERFECT_PAIR": {"ONE_PERFECT_PAIR": "500"}},  # far above the ceiling of every game
])
def test_bad_side_bets_are_refused_naming_the_field(as_operator, game, unchanged, side_bets):
    with unchanged():
        response = as_operator.patch(f"{API}/games/{game.slug}/", {"side_bets": side_bets, "reason": "paytable"})
    assert_names_field(response, 400, "side_bets")


def test_a_change_of_side_bets_is_audited_and_the_odds_follow(as_operator, game):
    response = as_operator.patch(f"{API}/games/{game.slug}/", {"side_bets": PAIRS, "reason": "add pairs"})
    assert response.status_code == 200, response.content
    odds = as_operator.get(f"{API}/games/{game.slug}/odds/").json()
    assert set(odds["bets"]) == {"PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "DRAGON_BONUS_BANKER"}
    pair = odds["bets"]["PLAYER_PAIR"]
    counts = bet_odds(game.decks)["PLAYER_PAIR"]
    assert [event["combinations"] for event in pair["events"]] == [counts.counts["PAIR"], counts.counts["NO_PAIR"]]
    assert sum(event["combinations"] for event in pair["events"]) == odds["deals"]
    assert pair["rtp"] == float(bet_rtp(counts, make_paytable("PLAYER_PAIR", {"PAIR": "12"})))


def test_a_bet_on_a_side_bet_the_game_does_not_offer_is_refused(as_integration, open_round, player, unchanged):
    for bet_type in ("PLAYER_PAIR", "BANKER_COMMISSION_FREE"):
        with unchanged():
            response = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", {
                "account": "player-1", "bet_type": bet_type, "stake": "5.00", "idempotency_key": bet_type})
        assert_names_field(response, 400, "bet_type")
    assert not Bet.objects.exists()


def test_a_side_bet_answers_with_its_paytable(as_operator, as_integration, game, open_round, player):
    as_operator.patch(f"{API}/games/{game.slug}/", {"side_bets": PAIRS, "reason": "add pairs"})
    response = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", {
        "account": "player-1", "bet_type": "DRAGON_BONUS_BANKER", "stake": "5.00", "idempotency_key": "d1"})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["paytable"] == {"NATURAL_WIN": "2", "WIN_BY_9": "31", "NATURAL_TIE": "1"}
    assert Decimal(body["multiplier"]) == 31


def test_every_bet_answers_with_its_event_on_the_deal(as_operator, as_integration, as_support, game, open_round,
                                                      player):
    every_side_bet = {name: {event: str(pays) for event, pays in REGISTRY[name].default_paytable.items()}
                      for name in SIDE_BET_TYPES}
    response = as_operator.patch(f"{API}/games/{game.slug}/", {"side_bets": every_side_bet, "reason": "every side bet"},
                                 format="json")
    assert response.status_code == 200, response.content
    placed = {}
    for bet_type in BET_TYPES:
        response = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", {
            "account": "player-1", "bet_type": bet_type, "stake": "5.00", "idempotency_key": bet_type})
        assert response.status_code == 201, response.content
        assert response.json()["event"] is None  # not dealt yet
        placed[bet_type] = response.json()["id"]
    dealt = as_integration.post(f"{API}/rounds/{open_round.pk}/deal/").json()
    for bet_type, bet_id in placed.items():
        event = as_support.get(f"{API}/bets/{bet_id}/").json()["event"]
        assert event == EVENT_OF[bet_type](dealt), bet_type  # the tests' own rules, not the engine's
    listed = {bet["bet_type"]: bet["event"] for bet in as_support.get(f"{API}/bets/", {"round": open_round.pk})
              .json()["results"]}
    assert listed == {bet_type: EVENT_OF[bet_type](dealt) for bet_type in BET_TYPES}
    assert {bet["event"] for bet in dealt["bets"]} == set(listed.values())
