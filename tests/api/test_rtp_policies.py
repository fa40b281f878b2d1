"""RTP policies through the API: defined by administrators, kept by every game assigned to them."""

from decimal import Decimal

import pytest

from audit.models import AuditEvent
from games import services as game_services
from games.models import GameInstance, RtpPolicy
from tests.api.helpers import API, assert_names_field

pytestmark = pytest.mark.django_db

# 8 decks: Player 2.0 → 98.7649 %, Banker 1.95 → 98.9421 %, Tie 9.0 → 85.6404 %, Banker 1.9 → 96.6491 %.


@pytest.fixture
def mga(administrator):
    return game_services.rtp_policy_create(actor=administrator, name="MGA", min_banker_rtp=Decimal("97.0000"),
                                           max_banker_rtp=Decimal("99.0000"), min_tie_rtp=Decimal("80.0000"),
                                           max_rtp=Decimal("99.5000"))


class TestPolicies:
    def test_administrators_define_them_others_read_them(self, as_admin, as_operator, as_support):
        response = as_admin.post(f"{API}/rtp-policies/", {"name": "UKGC", "min_player_rtp": "95.5",
                                                          "max_rtp": "99.9"})
        assert response.status_code == 201, response.content
        assert response.json()["min_player_rtp"] == "95.5000"
        assert as_operator.post(f"{API}/rtp-policies/", {"name": "X"}).status_code == 403
        assert [p["name"] for p in as_support.get(f"{API}/rtp-policies/").json()["results"]] == ["UKGC"]
        assert AuditEvent.objects.filter(action="rtp_policy.created").exists()

    @pytest.mark.parametrize("body,field", [
        ({"name": "A", "min_tie_rtp": "90", "max_tie_rtp": "80"}, "max_tie_rtp"),
        ({"name": "A", "max_rtp": "-1"}, "max_rtp"),
        ({"name": "A", "max_rtp": "99.12345"}, "max_rtp"),
        ({"name": "A", "max_rtp": "NaN"}, "max_rtp"),
        ({"name": ""}, "name"),
        ({"name": "A", "games": []}, "games"),
    ])
    def test_bad_limits_name_the_field_and_write_nothing(self, as_admin, unchanged, body, field):
        with unchanged():
            assert_names_field(as_admin.post(f"{API}/rtp-policies/", body), 400, field)
        assert not RtpPolicy.objects.exists()

    def test_a_policy_cannot_be_tightened_past_an_assigned_game(self, as_admin, game, mga, administrator):
        game_services.game_update(game_id=game.pk, actor=administrator, reason="assign",
                                  changes={"rtp_policy": mga})
        response = as_admin.patch(f"{API}/rtp-policies/{mga.pk}/", {"max_banker_rtp": "98.5", "reason": "tighter"})
        assert_names_field(response, 400, "max_banker_rtp")
        message = response.json()["max_banker_rtp"][0]
        assert "main-table" in message and "98.9421 %" in message and "98.5000 %" in message  # rounded up
        assert RtpPolicy.objects.get().max_banker_rtp == Decimal("99.0000")
        loosened = as_admin.patch(f"{API}/rtp-policies/{mga.pk}/", {"max_banker_rtp": "99.5", "reason": "looser"})
        assert loosened.status_code == 200
        assert AuditEvent.objects.get(action="rtp_policy.changed").before == {"max_banker_rtp": "99.0000"}


class TestGamesUnderAPolicy:
    def test_a_game_outside_its_policy_is_refused_with_the_rtp_and_the_limit(self, as_operator, game, mga,
                                                                            administrator, unchanged):
        game_services.game_update(game_id=game.pk, actor=administrator, reason="assign", changes={"rtp_policy": mga})
        with unchanged():
            response = as_operator.patch(f"{API}/games/main-table/", {"banker_multiplier": "1.9", "reason": "x"})
        assert_names_field(response, 400, "banker_multiplier")
        assert response.json()["banker_multiplier"] == [
            "The Banker bet's return to player, 96.6491 %, is below the minimum of 97.0000 % of the RTP policy “MGA”."]

    def test_assigning_a_policy_the_game_breaks_is_refused(self, as_operator, game, administrator, unchanged):
        strict = game_services.rtp_policy_create(actor=administrator, name="Strict", max_rtp=Decimal("98.9"))
        with unchanged():
            response = as_operator.patch(f"{API}/games/main-table/", {"rtp_policy": strict.name, "reason": "x"})
        assert_names_field(response, 400, "rtp_policy")
        assert "98.9421 %" in response.json()["rtp_policy"][0] and "98.9000 %" in response.json()["rtp_policy"][0]

    def test_creating_a_game_outside_a_policy_is_refused(self, as_operator, mga, unchanged):
        with unchanged():
            response = as_operator.post(f"{API}/games/", {"slug": "t", "name": "T", "min_bet": "1", "max_bet": "2",
                                                          "tie_multiplier": "5", "rtp_policy": "MGA"})
        assert_names_field(response, 400, "tie_multiplier")

    def test_the_exact_boundary_is_inside(self, as_operator, as_admin, game, administrator):
        # Banker 1.95 on 8 decks is 98.942094…%: a minimum of 98.9420 is met, 98.9421 is not.
        policy = game_services.rtp_policy_create(actor=administrator, name="Edge", min_banker_rtp=Decimal("98.9420"))
        ok = as_operator.patch(f"{API}/games/main-table/", {"rtp_policy": "Edge", "reason": "x"})
        assert ok.status_code == 200, ok.content
        assert ok.json()["rtp_policy"] == "Edge"
        too_high = as_admin.patch(f"{API}/rtp-policies/{policy.pk}/", {"min_banker_rtp": "98.9421", "reason": "y"})
        assert_names_field(too_high, 400, "min_banker_rtp")
        assert "98.9420 %, is below the minimum of 98.9421 %" in too_high.json()["min_banker_rtp"][0]

    def test_the_service_refuses_too(self, game, mga, administrator):
        from django.core.exceptions import ValidationError

        with pytest.raises(ValidationError) as error:
            game_services.game_update(game_id=game.pk, actor=administrator, reason="x",
                                      changes={"rtp_policy": mga, "tie_multiplier": Decimal("5")})
        assert "tie_multiplier" in error.value.message_dict
        assert GameInstance.objects.get().rtp_policy is None

    def test_the_odds_show_the_policy_limits(self, as_support, game, mga, administrator):
        game_services.game_update(game_id=game.pk, actor=administrator, reason="assign", changes={"rtp_policy": mga})
        policy = as_support.get(f"{API}/games/main-table/odds/").json()["policy"]
        assert policy["name"] == "MGA" and policy["min_banker_rtp"] == "97.0000" and policy["max_player_rtp"] is None

    def test_without_a_policy_only_the_ceiling_of_every_game_stands(self, as_operator, game):
        # Tie 10.5 on 8 decks returns 99.9138 %: under MAX_GAME_RTP (100 %); tie 20 (190 %) is not.
        response = as_operator.patch(f"{API}/games/main-table/", {"tie_multiplier": "10.5", "reason": "promo"})
        assert response.status_code == 200 and response.json()["rtp_policy"] is None
        assert_names_field(as_operator.patch(f"{API}/games/main-table/", {"tie_multiplier": "20", "reason": "promo"}),
                           400, "tie_multiplier")

