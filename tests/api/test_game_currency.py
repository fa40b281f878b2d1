"""A game's currency is frozen once it has taken a bet or dealt a round: its money and its daily aggregates are in that
currency. Refused (400 naming ``currency``) directly, when a change is proposed for a second person,
and again when one is approved after a bet arrived; refused too while a round of the game is open
(a bet may be on its way in the old currency)."""

import pytest
from django.core.exceptions import ValidationError

from approvals import services as approval_services
from approvals.actions import GAME_UPDATE
from approvals.models import Approval
from backoffice.roles import Role
from games import services as game_services
from games.models import GameInstance
from tests.api.helpers import API, assert_names_field
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

GAME = f"{API}/games/main-table/"


@pytest.fixture
def game_with_a_bet(game, open_round, player, integration):
    game_services.bet_place(round_id=open_round.pk, account_external_id=player.external_id, bet_type="BANKER",
                            stake="10.00", idempotency_key="k-1", client=integration)
    game_services.round_deal(round_id=open_round.pk, actor=integration)
    return game


def test_a_game_that_took_no_bet_and_has_no_open_round_changes_currency(as_operator, game):
    response = as_operator.patch(GAME, {"currency": "EUR", "reason": "euro table"})
    assert response.status_code == 200, response.content
    assert response.json()["currency"] == "EUR" and GameInstance.objects.get().currency == "EUR"


def test_the_api_refuses_once_the_game_has_taken_a_bet(as_operator, game_with_a_bet, unchanged):
    with unchanged():  # the change would need a second person: refused when proposed, nothing held
        response = as_operator.patch(GAME, {"currency": "EUR", "reason": "euro table"})
    assert_names_field(response, 400, "currency")
    assert "USD" in response.json()["currency"][0]
    assert not Approval.objects.exists()
    # Other fields of the game still change (through a second person).
    assert as_operator.patch(GAME, {"name": "Salon", "reason": "rename"}).status_code == 200


def test_the_service_refuses_whoever_calls_it(game_with_a_bet, operator):
    with pytest.raises(ValidationError) as refused:
        game_services.game_update(game_id=game_with_a_bet.pk, actor=operator, reason="x", changes={"currency": "EUR"})
    assert set(refused.value.message_dict) == {"currency"}
    # The same currency given again is no change.
    game_services.game_update(game_id=game_with_a_bet.pk, actor=operator, reason="x", changes={"currency": "USD"})


def test_refused_once_a_round_was_dealt_even_with_its_bets_archived(game, open_round, integration, operator):
    # A dealt round stays when its month's bets are archived: the game's aggregates are in USD.
    game_services.round_deal(round_id=open_round.pk, actor=integration)
    with pytest.raises(ValidationError, match="dealt rounds in USD"):
        game_services.game_update(game_id=game.pk, actor=operator, reason="x", changes={"currency": "EUR"})


def test_refused_while_a_round_is_open_a_bet_may_be_on_its_way(as_operator, open_round, unchanged):
    with unchanged():
        response = as_operator.patch(GAME, {"currency": "EUR", "reason": "euro table"})
    assert_names_field(response, 400, "currency")
    assert "open" in response.json()["currency"][0]


def test_a_request_held_before_a_bet_is_refused_when_approved_after_it(api_as, as_operator, game, player,
                                                                      integration, monkeypatch):
    # A request held while the game had taken no bet (say, under a policy that holds every change).
    monkeypatch.setattr(approval_services, "kind_needing_approval",
                        lambda service, arguments: GAME_UPDATE if service is GAME_UPDATE.service else None)
    response = as_operator.patch(GAME, {"currency": "EUR", "reason": "euro table"})
    assert response.status_code == 202, response.content
    approval = response.json()["approval"]
    assert approval["changes"] == {"currency": {"before": "USD", "after": "EUR"}}
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.bet_place(round_id=round_.pk, account_external_id=player.external_id, bet_type="PLAYER",
                            stake="5.00", idempotency_key="k-1", client=integration)
    game_services.round_deal(round_id=round_.pk, actor=integration)

    second = api_as(make_user("oscar-operator", Role.OPERATOR))
    response = second.post(f"{API}/approvals/{approval['id']}/approve/", {"reason": "checked"})
    assert_names_field(response, 409, "approval")
    assert "currency" in response.json()["approval"][0]
    assert GameInstance.objects.get().currency == "USD"
    assert Approval.objects.get().status == "pending"
