"""Rounds: open, recall, deal, void, verify, and the filtered, paginated list."""

import re
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from backoffice.api.pagination import CURSOR_PATTERN
from games import services
from games.choices import BetStatus, GameStatus
from games.engine import verify_round
from games.models import Bet, Round, SeedPair
from tests.api.helpers import API, assert_names_field
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry

pytestmark = pytest.mark.django_db


def place(round_, account, client, bet_type="PLAYER", stake="10.00", key=None):
    bet, _created = services.bet_place(
        round_id=round_.pk, account_external_id=account.external_id, bet_type=bet_type, stake=stake,
        idempotency_key=key or f"{round_.pk}-{account.external_id}-{bet_type}", client=client)
    return bet


class TestOpen:
    def test_opens_on_the_active_pair_with_the_next_nonce(self, as_integration, game, integration):
        pair = SeedPair.objects.get(game=game)
        response = as_integration.post(f"{API}/games/main-table/rounds/")
        assert response.status_code == 201, response.content
        body = response.json()
        round_ = Round.objects.get()
        assert body == {**body, "id": round_.pk, "game": "main-table", "status": "OPEN", "nonce": 0, "decks": 8,
                        "server_seed_hash": pair.server_seed_hash, "client_seed": "house-client-seed",
                        "cards": [], "player": None, "banker": None, "outcome": None}
        assert as_integration.post(f"{API}/games/main-table/rounds/").json()["nonce"] == 1

    def test_needs_no_body_but_rejects_malformed_json(self, as_integration, game, unchanged):
        with unchanged():
            response = as_integration.generic("POST", f"{API}/games/main-table/rounds/", "{",
                                              content_type="application/json")
        assert_names_field(response, 400, "detail")

    @pytest.mark.parametrize("status", [GameStatus.SUSPENDED, GameStatus.RETIRED])
    def test_refused_when_the_game_is_not_active(self, as_integration, game, operator, unchanged, status):
        services.game_update(game_id=game.pk, actor=operator, reason="closing", changes={"status": status})
        with unchanged():
            response = as_integration.post(f"{API}/games/main-table/rounds/")
        assert_names_field(response, 409, "game")

    def test_unknown_game_is_404(self, as_integration, unchanged):
        with unchanged():
            assert as_integration.post(f"{API}/games/nope/rounds/").status_code == 404


class TestRecall:
    def test_an_open_round(self, as_support, open_round, player, integration):
        bet = place(open_round, player, integration, "BANKER", "25.00")
        response = as_support.get(f"{API}/rounds/{open_round.pk}/")
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "OPEN" and body["cards"] == [] and body["player"] is None
        assert body["server_seed"] is None
        assert body["server_seed_hash"] == open_round.seed_pair.server_seed_hash
        assert body["bets"] == [{
            **body["bets"][0], "id": bet.pk, "round": open_round.pk, "game": "main-table", "account": "player-1",
            "bet_type": "BANKER", "stake": "25.00", "multiplier": "1.9500", "status": "PENDING", "payout": None,
            "client": "game-server",
        }]

    def test_a_dealt_round_shows_cards_hands_and_the_seed_once_revealed(self, as_support, open_round,
                                                                       integration, operator):
        services.round_deal(round_id=open_round.pk, actor=integration)
        pair = open_round.seed_pair
        expected = verify_round(pair.server_seed, pair.client_seed, open_round.nonce, open_round.decks)

        body = as_support.get(f"{API}/rounds/{open_round.pk}/").json()
        for key in ("cards", "player", "banker", "natural", "outcome"):
            assert body[key] == expected[key]
        assert body["server_seed"] is None and body["nonce"] == 0 and body["decks"] == 8

        services.seed_rotate(game_id=open_round.game_id, actor=operator, reason="rotation")
        body = as_support.get(f"{API}/rounds/{open_round.pk}/").json()
        assert body["server_seed"] == pair.server_seed
        assert body["seed_revealed_at"]

    def test_unknown_round_is_404(self, as_support):
        response = as_support.get(f"{API}/rounds/999999/")
        assert response.status_code == 404 and "detail" in response.json()

    def test_non_numeric_round_id_is_a_json_404(self, as_support):
        response = as_support.get(f"{API}/rounds/abc/")
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}


class TestDeal:
    def test_deals_by_pf1_and_returns_the_dealt_round(self, as_integration, open_round, player, integration):
        place(open_round, player, integration)
        response = as_integration.post(f"{API}/rounds/{open_round.pk}/deal/")
        assert response.status_code == 200, response.content
        body = response.json()
        pair = open_round.seed_pair
        expected = verify_round(pair.server_seed, pair.client_seed, 0, 8)
        assert body["status"] == "DEALT"
        assert body["cards"] == expected["cards"] and body["outcome"] == expected["outcome"]
        assert body["player"] == expected["player"] and body["banker"] == expected["banker"]
        assert body["server_seed"] is None
        assert len(body["bets"]) == 1

    def test_settlement_follows_the_commit(self, as_integration, as_support, open_round, player, integration,
                                           django_capture_on_commit_callbacks):
        bet = place(open_round, player, integration, "TIE", "10.00")
        with django_capture_on_commit_callbacks(execute=True):
            response = as_integration.post(f"{API}/rounds/{open_round.pk}/deal/")
        assert response.status_code == 200
        body = as_support.get(f"{API}/rounds/{open_round.pk}/").json()
        assert body["status"] == "SETTLED"
        bet.refresh_from_db()
        assert body["bets"][0]["status"] == bet.status != BetStatus.PENDING
        assert body["bets"][0]["payout"] == str(bet.payout)

    def test_dealing_again_changes_nothing(self, as_integration, open_round, integration, unchanged):
        first = as_integration.post(f"{API}/rounds/{open_round.pk}/deal/").json()
        with unchanged():
            again = as_integration.post(f"{API}/rounds/{open_round.pk}/deal/")
        assert again.status_code == 200
        assert again.json()["cards"] == first["cards"]

    def test_a_void_round_cannot_be_dealt(self, as_integration, open_round, operator, unchanged):
        services.round_void(round_id=open_round.pk, actor=operator, reason="table fault")
        with unchanged():
            response = as_integration.post(f"{API}/rounds/{open_round.pk}/deal/")
        assert_names_field(response, 409, "round")

    def test_unknown_round_is_404(self, as_integration):
        assert as_integration.post(f"{API}/rounds/999999/deal/").status_code == 404


class TestVoid:
    def test_voids_and_refunds_every_bet(self, as_operator, open_round, player, funded_account, integration):
        other = funded_account("player-2", "50.00")
        place(open_round, player, integration, "PLAYER", "100.00")
        place(open_round, other, integration, "TIE", "5.00")
        response = as_operator.post(f"{API}/rounds/{open_round.pk}/void/", {"reason": "dealer error"})
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["status"] == "VOID" and body["void_reason"] == "dealer error" and body["voided_at"]
        assert {bet["status"] for bet in body["bets"]} == {"REFUNDED"}
        assert [bet["payout"] for bet in body["bets"]] == ["100.00", "5.00"]
        player.refresh_from_db()
        other.refresh_from_db()
        assert (player.balance, other.balance) == (500, 50)
        assert LedgerEntry.objects.filter(kind=LedgerKind.REFUND).count() == 2

    def test_a_dealt_round_can_be_voided(self, as_operator, open_round, integration, settings):
        settings.APPROVAL_ACTIONS = []  # by default a second person approves it (tests/approvals)
        services.round_deal(round_id=open_round.pk, actor=integration)
        response = as_operator.post(f"{API}/rounds/{open_round.pk}/void/", {"reason": "shoe misdealt"})
        assert response.status_code == 200
        assert response.json()["status"] == "VOID"

    @pytest.mark.parametrize("body", [{}, {"reason": ""}, {"reason": "  "}, {"reason": None}])
    def test_requires_a_reason(self, as_operator, open_round, player, integration, unchanged, body):
        place(open_round, player, integration)
        with unchanged():
            response = as_operator.post(f"{API}/rounds/{open_round.pk}/void/", body)
        assert_names_field(response, 400, "reason")

    def test_a_void_round_cannot_be_voided_again(self, as_operator, open_round, operator, unchanged):
        services.round_void(round_id=open_round.pk, actor=operator, reason="first")
        with unchanged():
            response = as_operator.post(f"{API}/rounds/{open_round.pk}/void/", {"reason": "second"})
        assert_names_field(response, 409, "round")

    def test_a_settled_round_cannot_be_voided(self, as_operator, open_round, integration, unchanged,
                                              django_capture_on_commit_callbacks):
        with django_capture_on_commit_callbacks(execute=True):
            services.round_deal(round_id=open_round.pk, actor=integration)
        with unchanged():
            response = as_operator.post(f"{API}/rounds/{open_round.pk}/void/", {"reason": "too late"})
        assert_names_field(response, 409, "round")

    def test_unknown_round_is_404(self, as_operator):
        assert as_operator.post(f"{API}/rounds/999999/void/", {"reason": "x"}).status_code == 404


class TestVerify:
    def test_409_while_the_seed_is_unrevealed(self, as_support, open_round, integration):
        services.round_deal(round_id=open_round.pk, actor=integration)
        response = as_support.get(f"{API}/rounds/{open_round.pk}/verify/")
        assert_names_field(response, 409, "server_seed")
        assert open_round.seed_pair.server_seed not in response.content.decode()

    def test_409_for_an_open_round(self, as_support, open_round):
        assert_names_field(as_support.get(f"{API}/rounds/{open_round.pk}/verify/"), 409, "server_seed")

    def test_verified_after_rotation_and_equal_to_the_engine(self, as_support, game, integration, operator):
        rounds = [services.round_open(game_id=game.pk, actor=integration) for _ in range(3)]
        for round_ in rounds:
            services.round_deal(round_id=round_.pk, actor=integration)
        services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
        pair = SeedPair.objects.get(pk=rounds[0].seed_pair_id)
        for round_ in rounds:
            response = as_support.get(f"{API}/rounds/{round_.pk}/verify/")
            assert response.status_code == 200, response.content
            body = response.json()
            assert body["verified"] is True and body["mismatches"] == []
            assert body["round"] == round_.pk
            assert body["inputs"] == {"server_seed": pair.server_seed, "client_seed": pair.client_seed,
                                      "nonce": round_.nonce, "decks": 8}
            assert body["recomputed"] == verify_round(pair.server_seed, pair.client_seed, round_.nonce, 8)
            assert body["stored"] == body["recomputed"]

    def test_reports_a_stored_round_that_does_not_match(self, as_support, open_round, integration, operator):
        services.round_deal(round_id=open_round.pk, actor=integration)
        services.seed_rotate(game_id=open_round.game_id, actor=operator, reason="rotation")
        Round.objects.filter(pk=open_round.pk).update(outcome="TIE", cards=["AC", "AD", "AH", "AS"])
        body = as_support.get(f"{API}/rounds/{open_round.pk}/verify/").json()
        assert body["verified"] is False
        assert "cards" in body["mismatches"]
        assert body["stored"]["cards"] == ["AC", "AD", "AH", "AS"]

    def test_409_for_a_round_voided_before_the_deal(self, as_support, open_round, operator):
        services.round_void(round_id=open_round.pk, actor=operator, reason="no deal")
        services.seed_rotate(game_id=open_round.game_id, actor=operator, reason="rotation")
        assert_names_field(as_support.get(f"{API}/rounds/{open_round.pk}/verify/"), 409, "round")

    def test_unknown_round_is_404(self, as_support):
        assert as_support.get(f"{API}/rounds/999999/verify/").status_code == 404


class TestList:
    @pytest.fixture
    def rounds(self, game, operator, integration):
        other = services.game_create(actor=operator, slug="side-table", name="Side", min_bet=1, max_bet=10)
        made = []
        for index in range(5):
            made.append(services.round_open(game_id=game.pk, actor=integration))
            if index % 2 == 0:
                services.round_deal(round_id=made[-1].pk, actor=integration)
        made.append(services.round_open(game_id=other.pk, actor=integration))
        return made

    def test_newest_first_and_paginated_by_cursor(self, as_support, rounds):
        seen = []
        url = f"{API}/rounds/?page_size=2"
        while url:
            body = as_support.get(url).json()
            assert len(body["results"]) <= 2
            seen.extend(item["id"] for item in body["results"])
            url = body["next"]
        assert seen == sorted((round_.pk for round_ in rounds), reverse=True)

    def test_the_schema_s_cursor_alphabet_holds_every_cursor_the_api_gives_out(self, as_support, rounds):
        """Forward and backward links (their cursors carry an offset and a direction, whose base64
        uses + and /) all match the pattern the schema documents."""
        schema = as_support.get("/api/schema/", {"format": "json"}).json()
        documented = {parameter["schema"]["pattern"] for path in schema["paths"].values()
                      for operation in path.values() for parameter in operation.get("parameters", ())
                      if parameter["name"] == "cursor"}
        assert documented == {CURSOR_PATTERN}
        cursors, url = [], f"{API}/rounds/?page_size=1"
        while url:
            body = as_support.get(url).json()
            links = [link for link in (body["next"], body["previous"]) if link]
            cursors += [parse_qs(urlsplit(link).query)["cursor"][0] for link in links]
            url = body["next"]
        previous = as_support.get(f"{API}/rounds/?page_size=1&cursor={quote(cursors[-1])}").json()["previous"]
        cursors.append(parse_qs(urlsplit(previous).query)["cursor"][0])
        assert len(cursors) > len(rounds)
        assert all(re.fullmatch(CURSOR_PATTERN, cursor) for cursor in cursors), cursors

    def test_default_page_size_is_50(self, as_support, game, integration):
        for _ in range(51):
            services.round_open(game_id=game.pk, actor=integration)
        body = as_support.get(f"{API}/rounds/").json()
        assert len(body["results"]) == 50 and body["next"]

    def test_filters_by_game_and_status(self, as_support, rounds):
        by_game = as_support.get(f"{API}/rounds/", {"game": "side-table"}).json()["results"]
        assert [item["id"] for item in by_game] == [rounds[-1].pk]
        dealt = as_support.get(f"{API}/rounds/", {"game": "main-table", "status": "DEALT"}).json()["results"]
        assert [item["id"] for item in dealt] == [rounds[4].pk, rounds[2].pk, rounds[0].pk]
        assert all(item["outcome"] for item in dealt)
        assert as_support.get(f"{API}/rounds/", {"game": "nope"}).json()["results"] == []

    def test_the_games_rounds(self, as_support, rounds):
        body = as_support.get(f"{API}/games/main-table/rounds/").json()
        assert [item["id"] for item in body["results"]] == [round_.pk for round_ in reversed(rounds[:5])]
        dealt = as_support.get(f"{API}/games/main-table/rounds/", {"status": "DEALT"}).json()["results"]
        assert [item["id"] for item in dealt] == [rounds[4].pk, rounds[2].pk, rounds[0].pk]
        assert_names_field(as_support.get(f"{API}/games/main-table/rounds/", {"status": "x"}), 400, "status")
        assert as_support.get(f"{API}/games/nope/rounds/").status_code == 404

    @pytest.mark.parametrize("params,field", [({"status": "DONE"}, "status"), ({"game": "not a slug"}, "game")])
    def test_rejects_bad_filters(self, as_support, params, field):
        assert_names_field(as_support.get(f"{API}/rounds/", params), 400, field)

    def test_a_bad_cursor_is_404(self, as_support, rounds):
        assert as_support.get(f"{API}/rounds/", {"cursor": "garbage"}).status_code == 404

    def test_a_page_takes_a_fixed_number_of_queries_and_never_counts(self, as_support, rounds):
        with CaptureQueriesContext(connection) as queries:
            as_support.get(f"{API}/rounds/")
        sql = [query["sql"].upper() for query in queries.captured_queries]
        assert not any("COUNT(" in statement for statement in sql)
        assert len(sql) <= 5  # token, two permission lookups, the page


def test_bets_endpoint_on_unknown_round_is_404(as_integration, player, unchanged):
    with unchanged():
        response = as_integration.post(f"{API}/rounds/999999/bets/", {
            "account": "player-1", "bet_type": "PLAYER", "stake": "10.00", "idempotency_key": "k"})
    assert response.status_code == 404
    assert Bet.objects.count() == 0

