"""Seed pairs: the active pair (hash only), the revealed pairs (with their seeds), rotation."""

import pytest

from audit.choices import AuditAction
from audit.models import AuditEvent
from games import services
from games.engine import server_seed_hash
from games.models import SeedPair
from tests.api.helpers import API, assert_names_field

pytestmark = pytest.mark.django_db


def rotate(client, **body):
    return client.post(f"{API}/games/main-table/seeds/rotate/", {"reason": "scheduled rotation", **body})


class TestSeeds:
    def test_shows_the_active_pair_without_its_seed(self, as_support, game):
        pair = SeedPair.objects.get(game=game)
        response = as_support.get(f"{API}/games/main-table/seeds/")
        assert response.status_code == 200
        body = response.json()
        assert body["active"] == {**body["active"], "id": pair.pk, "server_seed_hash": pair.server_seed_hash,
                                  "client_seed": "house-client-seed", "next_nonce": 0}
        assert "server_seed" not in body["active"]
        assert body["revealed"] == []
        assert pair.server_seed not in response.content.decode()

    def test_lists_revealed_pairs_with_their_seeds_newest_first(self, as_support, game, operator, integration):
        first = SeedPair.objects.get(game=game)
        services.round_open(game_id=game.pk, actor=integration)  # nonce 0, then dealt
        services.round_deal(round_id=game.rounds.get().pk, actor=integration)
        services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
        second = SeedPair.objects.get(game=game, revealed_at__isnull=True)
        services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation", client_seed="third")
        active = SeedPair.objects.get(game=game, revealed_at__isnull=True)

        body = as_support.get(f"{API}/games/main-table/seeds/").json()
        assert body["active"]["id"] == active.pk and body["active"]["client_seed"] == "third"
        assert [pair["id"] for pair in body["revealed"]] == [second.pk, first.pk]
        revealed_first = body["revealed"][1]
        assert revealed_first["server_seed"] == first.server_seed
        assert server_seed_hash(revealed_first["server_seed"]) == revealed_first["server_seed_hash"]
        assert revealed_first["rounds_played"] == 1
        assert revealed_first["revealed_at"]
        assert active.server_seed not in str(body)

    def test_revealed_pairs_are_paginated(self, as_support, game, operator):
        for _ in range(3):
            services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
        body = as_support.get(f"{API}/games/main-table/seeds/", {"page_size": 2}).json()
        assert len(body["revealed"]) == 2 and body["next"]
        rest = as_support.get(body["next"]).json()
        assert len(rest["revealed"]) == 1 and rest["next"] is None
        assert rest["active"] == body["active"]

    def test_unknown_game_is_404(self, as_support):
        assert as_support.get(f"{API}/games/nope/seeds/").status_code == 404


class TestRotate:
    def test_reveals_the_active_pair_and_returns_the_new_one_without_its_seed(self, as_operator, game):
        old = SeedPair.objects.get(game=game)
        response = rotate(as_operator)
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["revealed"]["id"] == old.pk
        assert body["revealed"]["server_seed"] == old.server_seed
        assert body["revealed"]["server_seed_hash"] == server_seed_hash(old.server_seed)
        new = SeedPair.objects.get(game=game, revealed_at__isnull=True)
        assert body["active"]["id"] == new.pk
        assert body["active"]["server_seed_hash"] == new.server_seed_hash
        assert body["active"]["client_seed"] == "house-client-seed"  # kept when none is given
        assert "server_seed" not in body["active"]
        assert new.server_seed not in response.content.decode()

    def test_takes_a_new_client_seed(self, as_operator, game):
        response = rotate(as_operator, client_seed="player.chosen-seed_1~")
        assert response.status_code == 200
        assert response.json()["active"]["client_seed"] == "player.chosen-seed_1~"

    @pytest.mark.parametrize("client_seed", ["", "x" * 65, "line\nbreak", None, ["a"], "';touch x;'",
                                             "$(id)", "`id`", "seed with spaces", "Ünïcödé", "-flag", "a:b"])
    def test_rejects_a_bad_client_seed(self, as_operator, game, unchanged, client_seed):
        with unchanged():
            response = rotate(as_operator, client_seed=client_seed)
        assert_names_field(response, 400, "client_seed")

    def test_with_a_round_open_it_rotates_now_and_reveals_later(self, as_operator, as_integration, open_round):
        old = SeedPair.objects.get(pk=open_round.seed_pair_id)
        response = rotate(as_operator)
        assert response.status_code == 202, response.content
        body = response.json()
        assert body["pending_reveal"]["id"] == old.pk and body["pending_reveal"]["open_rounds"] == 1
        assert body["pending_reveal"]["retired_at"] and "server_seed" not in body["pending_reveal"]
        assert old.server_seed not in response.content.decode()
        assert body["active"]["id"] != old.pk
        assert as_integration.post(f"{API}/games/{open_round.game.slug}/rounds/").json()["nonce"] == 0
        as_integration.post(f"{API}/rounds/{open_round.pk}/deal/")
        recalled = as_operator.get(f"{API}/rounds/{open_round.pk}/").json()
        assert recalled["server_seed"] == old.server_seed

    def test_unknown_game_is_404(self, as_operator):
        assert as_operator.post(f"{API}/games/nope/seeds/rotate/", {"reason": "r"}).status_code == 404

    @pytest.mark.parametrize("body", [{}, {"reason": ""}, {"reason": "   "}, {"reason": None}])
    def test_asks_for_a_reason(self, as_operator, game, unchanged, body):
        with unchanged():
            response = as_operator.post(f"{API}/games/main-table/seeds/rotate/", body, format="json")
        assert_names_field(response, 400, "reason")

    def test_the_reason_is_in_the_audit_event(self, as_operator, game):
        old = SeedPair.objects.get(game=game)
        assert rotate(as_operator, reason="  quarterly rotation ").status_code == 200
        event = AuditEvent.objects.get(action=AuditAction.SEED_PAIR_RETIRED, object_id=str(old.pk))
        assert event.reason == "quarterly rotation"
