"""RTP policies in the admin: defined by administrators, enforced on the game form, shown in the preview."""

from decimal import Decimal

import pytest

from audit.models import AuditEvent
from backoffice.formatting import EMPTY
from games import services as game_services
from games.models import GameInstance, RtpPolicy
from tests.admin.helpers import admin_url, change_form, snapshot

pytestmark = pytest.mark.django_db

POLICY_FORM = {"name": "MGA", "description": "Malta", "min_player_rtp": "", "max_player_rtp": "",
               "min_banker_rtp": "97", "max_banker_rtp": "99", "min_tie_rtp": "", "max_tie_rtp": "", "max_rtp": ""}


@pytest.fixture
def mga(administrator, game):
    policy = game_services.rtp_policy_create(actor=administrator, name="MGA", min_banker_rtp=Decimal("97"),
                                             max_banker_rtp=Decimal("99"))
    game_services.game_update(game_id=game.pk, actor=administrator, reason="assign", changes={"rtp_policy": policy})
    return policy


def test_administrators_define_policies_operators_cannot(as_admin, as_operator):
    assert as_operator.post(admin_url(RtpPolicy, "add"), POLICY_FORM).status_code == 403
    response = as_admin.post(admin_url(RtpPolicy, "add"), POLICY_FORM)
    assert response.status_code == 302
    assert RtpPolicy.objects.get().min_banker_rtp == Decimal("97.0000")
    assert AuditEvent.objects.filter(action="rtp_policy.created", actor="ada-admin").exists()


def test_tightening_past_an_assigned_game_is_a_form_error(as_admin, mga):
    before = snapshot()
    response = as_admin.post(admin_url(mga, "change"), {**POLICY_FORM, "max_banker_rtp": "98.5", "reason": "x"})
    assert response.status_code == 200
    assert "Game main-table: The Banker bet&#x27;s return to player, 98.9421 %" in response.content.decode()
    assert snapshot() == before and RtpPolicy.objects.get().max_banker_rtp == Decimal("99.0000")


def test_the_game_form_refuses_payouts_outside_the_policy(as_operator, game, mga):
    before = snapshot()
    response = as_operator.post(admin_url(game, "change"),
                                change_form(game, banker_multiplier="1.9", rtp_policy=str(mga.pk), reason="promo"))
    assert response.status_code == 200
    assert "96.6491 %, is below the minimum of 97.0000 % of the RTP policy “MGA”" in response.content.decode()
    assert snapshot() == before


def test_the_preview_shows_the_policy_limits(as_operator, game, mga):
    page = as_operator.get(admin_url(game, "change")).content.decode()
    assert "RTP policy: <strong data-field=\"policy\">MGA</strong>" in page
    assert '<td data-field="min_rtp">97.0000 %</td>' in page
    preview = as_operator.get(admin_url(GameInstance, "rtp_preview"),
                              {"decks": "8", "player": "2", "banker": "1.9", "tie": "9", "policy": str(mga.pk)}).json()
    banker = next(bet for bet in preview["bets"] if bet["bet_type"] == "BANKER")
    assert (banker["min_rtp"], banker["max_rtp"], banker["outside_policy"]) == ("97.0000", "99.0000", True)
    assert preview["policy"]["name"] == "MGA" and len(preview["policy_errors"]) == 1
    without = as_operator.get(admin_url(GameInstance, "rtp_preview"),
                              {"decks": "8", "player": "2", "banker": "1.9", "tie": "9"}).json()
    assert without["policy"] is None and without["policy_errors"] == []


def test_the_policy_list_shows_the_side_bets_it_limits(as_admin, administrator):
    game_services.rtp_policy_create(actor=administrator, name="UKGC", min_banker_rtp=Decimal("97"),
                                    max_player_pair_rtp=Decimal("92"), min_dragon_bonus_banker_rtp=Decimal("90"))
    game_services.rtp_policy_create(actor=administrator, name="Main only", max_tie_rtp=Decimal("90"))
    page = as_admin.get(admin_url(RtpPolicy, "changelist")).content.decode()
    assert '<td class="field-side_bet_limits">Player pair ≤ 92; Dragon Bonus Banker ≥ 90</td>' in page
    assert '<td class="field-banker_limits">≥ 97</td>' in page and '<td class="field-tie_limits">≤ 90</td>' in page
    limiting_no_side_bet = RtpPolicy.objects.count() - 1  # "Main only", and any a migration made
    assert page.count(f'<td class="field-side_bet_limits">{EMPTY}</td>') == limiting_no_side_bet
