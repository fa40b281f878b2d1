"""Four eyes on a game's side bets: once the game has taken bets, a change of its paytables (from the
admin or the API) waits for a second person like a multiplier change; approving applies it, and a
side bet accepted after that carries the new paytable."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from approvals.models import Approval
from audit.models import AuditEvent
from backoffice.roles import Role
from games import services as game_services
from games.models import Bet, GameInstance
from tests.admin.conftest import client_for
from tests.admin.helpers import admin_url, change_form
from tests.api.helpers import API
from tests.conftest import api_client_for, make_user

pytestmark = pytest.mark.django_db

PAIRS = {"PLAYER_PAIR": {"PAIR": "12"}}


@pytest.fixture
def second_operator(db):
    return make_user("oscar-operator", Role.OPERATOR)


@pytest.fixture
def player(funded_account):
    return funded_account("player-1", "500.00")


@pytest.fixture
def place(game, integration, player):
    """place(bet_type) opens a round of the game and places a 10.00 bet of that type on it."""

    def run(bet_type: str) -> Bet:
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        bet, _created = game_services.bet_place(round_id=round_.pk, account_external_id=player.external_id,
                                                bet_type=bet_type, stake="10.00", idempotency_key=f"k-{round_.pk}",
                                                client=integration)
        return bet

    return run


@pytest.fixture
def game_with_bets(game, place):
    place("BANKER")
    game.refresh_from_db()
    return game


def assert_held_and_unchanged(approval: Approval, before: dict, after: dict, configured: int = 0) -> None:
    """The request holds the change; the game and its audit trail (``configured`` changes) are as they were."""
    assert approval.action == "game.update" and approval.status == "pending"
    assert approval.changes == {"side_bets": {"before": before, "after": after}}
    assert GameInstance.objects.get().side_bets == before
    assert AuditEvent.objects.filter(action="game.configured").count() == configured


# --- Through the admin ------------------------------------------------------------------------------

def test_offering_a_side_bet_from_the_admin_waits_then_applies_and_prices_later_bets(
        operator, second_operator, game_with_bets, place):
    as_operator, as_second = client_for(operator), client_for(second_operator)
    data = change_form(game_with_bets, reason="Pairs for the weekend",
                       **{"side_bets-PLAYER_PAIR": "on", "side_bets-PLAYER_PAIR-PAIR": "12"})
    response = as_operator.post(admin_url(game_with_bets, "change"), data)
    assert response.status_code == 302, response.context and response.context["adminform"].form.errors

    approval = Approval.objects.get()
    assert_held_and_unchanged(approval, {}, PAIRS)
    assert approval.title == "Change game main-table: side bets"
    with pytest.raises(ValidationError, match="does not offer the PLAYER_PAIR bet"):
        place("PLAYER_PAIR")

    # The request reads as paytables, with each side bet's exact RTP before and after.
    queue = as_second.get(admin_url(Approval)).content.decode()
    assert "side bets: none → Player pair: PAIR 12" in queue
    page = as_second.get(admin_url(approval, "change")).content.decode()
    assert "<td>none</td><td>Player pair: PAIR 12</td>" in page
    pair_row = page.split('<th scope="row">Player pair</th>')[1].split("</tr>")[0]
    assert "not offered" in pair_row and "89.6386 % <small>(372/415)</small>" in pair_row

    # The proposer cannot approve it; a second operator does.
    as_operator.post(admin_url(approval, "approve"), {"reason": "mine"})
    assert Approval.objects.get().status == "pending"
    as_second.post(admin_url(approval, "approve"), {"reason": "Checked the RTP"})
    assert Approval.objects.get().status == "applied"
    assert GameInstance.objects.get().side_bets == PAIRS
    applied = AuditEvent.objects.get(action="game.configured")
    assert applied.actor == second_operator.username and applied.after == {"side_bets": PAIRS}

    bet = place("PLAYER_PAIR")
    assert (bet.paytable, bet.multiplier) == ({"PAIR": "12"}, Decimal("12"))


def test_a_paytable_change_from_the_admin_waits_and_earlier_bets_keep_theirs(
        operator, second_operator, game, place):
    game_services.game_update(game_id=game.pk, actor=operator, reason="pairs", changes={"side_bets": PAIRS})
    before = place("PLAYER_PAIR")
    data = change_form(game, reason="Pay less on pairs",
                       **{"side_bets-PLAYER_PAIR": "on", "side_bets-PLAYER_PAIR-PAIR": "11"})
    client_for(operator).post(admin_url(game, "change"), data)
    approval = Approval.objects.get()
    assert_held_and_unchanged(approval, PAIRS, {"PLAYER_PAIR": {"PAIR": "11"}}, configured=1)
    summary = client_for(second_operator).get(admin_url(Approval)).content.decode()
    assert "side bets: Player pair: PAIR 12 → Player pair: PAIR 11" in summary

    client_for(second_operator).post(admin_url(approval, "approve"), {"reason": "ok"})
    after = place("PLAYER_PAIR")
    before.refresh_from_db()
    assert before.paytable == {"PAIR": "12"} and after.paytable == {"PAIR": "11"}
    assert after.multiplier == Decimal("11")


def test_a_rename_sending_the_side_bets_as_they_are_is_not_held(operator, game_with_bets):
    # The form sends every offered paytable as it shows it (push events are not inputs): no change.
    dragon = {"NATURAL_WIN": "2", "WIN_BY_9": "31", "WIN_BY_4": "2", "NATURAL_TIE": "1"}
    game_services.game_update(game_id=game_with_bets.pk, actor=operator, reason="dragon",
                              changes={"side_bets": {"DRAGON_BONUS_PLAYER": dragon}})
    rows = {"side_bets-DRAGON_BONUS_PLAYER": "on", **{f"side_bets-DRAGON_BONUS_PLAYER-{event}": multiplier
                                                       for event, multiplier in dragon.items()
                                                       if event != "NATURAL_TIE"}}
    response = client_for(operator).post(admin_url(game_with_bets, "change"),
                                         change_form(game_with_bets, name="Salon", reason="rename", **rows))
    assert response.status_code == 302
    assert not Approval.objects.exists()
    game = GameInstance.objects.get()
    assert game.name == "Salon" and game.side_bets == {"DRAGON_BONUS_PLAYER": dragon}


# --- Through the API --------------------------------------------------------------------------------

def test_a_side_bets_patch_waits_for_a_second_operator_who_applies_it(operator, second_operator,
                                                                      game_with_bets, place):
    as_operator, as_second = api_client_for(operator), api_client_for(second_operator)
    response = as_operator.patch(f"{API}/games/main-table/", {"side_bets": PAIRS, "reason": "pairs"})
    assert response.status_code == 202, response.content
    held = response.json()["approval"]
    assert held["changes"] == {"side_bets": {"before": {}, "after": PAIRS}}
    assert_held_and_unchanged(Approval.objects.get(), {}, PAIRS)

    assert as_operator.post(f"{API}/approvals/{held['id']}/approve/", {"reason": "me"}).status_code == 403
    applied = as_second.post(f"{API}/approvals/{held['id']}/approve/", {"reason": "checked"})
    assert applied.status_code == 200, applied.content
    assert applied.json()["result"]["side_bets"] == PAIRS
    assert GameInstance.objects.get().side_bets == PAIRS

    bet = place("PLAYER_PAIR")
    assert bet.paytable == {"PAIR": "12"}
    shown = as_operator.get(f"{API}/bets/{bet.pk}/").json()
    assert shown["paytable"] == {"PAIR": "12"}


def test_a_bad_side_bets_patch_is_a_400_and_no_request(operator, game_with_bets):
    response = api_client_for(operator).patch(f"{API}/games/main-table/",
                                              {"side_bets": {"PLAYER_PAIR": {"PAIR": "0.5"}}, "reason": "x"})
    assert response.status_code == 400
    assert "PLAYER_PAIR.PAIR" in str(response.json())
    assert not Approval.objects.exists()


def test_a_request_over_side_bets_changed_since_is_flagged_and_refused(operator, second_operator, game_with_bets):
    as_operator, as_second = client_for(operator), client_for(second_operator)
    for multiplier in ("12", "11"):
        as_operator.post(admin_url(game_with_bets, "change"), change_form(
            game_with_bets, reason=f"pairs at {multiplier}",
            **{"side_bets-PLAYER_PAIR": "on", "side_bets-PLAYER_PAIR-PAIR": multiplier}))
    first, second = Approval.objects.order_by("pk")
    as_second.post(admin_url(first, "approve"), {"reason": "ok"})
    assert GameInstance.objects.get().side_bets == PAIRS

    page = as_second.get(admin_url(second, "change")).content.decode()
    assert ("<td>none</td><td>Player pair: PAIR 11</td><td>Player pair: PAIR 12<strong> (changed since proposed)"
            "</strong></td>") in page
    refused = as_second.post(admin_url(second, "approve"), {"reason": "ok"}, follow=True).content.decode()
    assert "it was none, it is now Player pair: PAIR 12." in refused  # read as the diff reads, not a dict
    assert Approval.objects.get(pk=second.pk).status == "pending"
    assert GameInstance.objects.get().side_bets == PAIRS


def test_a_new_game_with_side_bets_is_held_with_their_rtp(operator, second_operator):
    form = {"slug": "pairs-table", "name": "Pairs table", "status": "active", "decks": "6",
            "player_multiplier": "2.0", "banker_multiplier": "1.95", "tie_multiplier": "8.0", "min_bet": "1.00",
            "max_bet": "500.00", "currency": "USD", "client_seed": "", "reason": "A table with pairs",
            "side_bets-PLAYER_PAIR": "on", "side_bets-PLAYER_PAIR-PAIR": "12"}
    client_for(operator).post(admin_url(GameInstance, "add"), form)
    approval = Approval.objects.get()
    assert approval.action == "game.create" and approval.changes["side_bets"] == PAIRS
    page = client_for(second_operator).get(admin_url(approval, "change")).content.decode()
    assert "<td>Player pair: PAIR 12</td>" in page
    assert page.count('<th scope="row">Player pair</th>') == 1  # in the RTP table, on both sides
    client_for(second_operator).post(admin_url(approval, "approve"), {"reason": "ok"})
    assert GameInstance.objects.get(slug="pairs-table").side_bets == PAIRS
