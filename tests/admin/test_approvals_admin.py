"""Four eyes in the admin: game changes, voids and adjustments held; the queue; approving and rejecting."""

import importlib

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.models import Permission, User
from django.contrib.messages import get_messages

from approvals.models import Approval
from audit.models import AuditEvent
from backoffice.roles import Role
from games import services as game_services
from games.choices import RoundStatus
from games.models import GameInstance
from tests.admin.conftest import client_for
from tests.admin.helpers import GAME_FORM, admin_url, change_form
from tests.conftest import make_user
from wallet.models import Account

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_second():
    return client_for(make_user("oscar-operator", Role.OPERATOR))


@pytest.fixture
def dealt(play, player, integration):
    round_ = play(bets=[(player, "BANKER", "10.00")], deal=False)
    return game_services.round_deal(round_id=round_.pk, actor=integration)


def messages_of(response) -> list:
    return [str(message) for message in get_messages(response.wsgi_request)]


def test_a_game_change_after_bets_is_sent_for_approval(as_operator, game, dealt):
    response = as_operator.post(admin_url(game, "change"),
                                change_form(game, tie_multiplier="8.0", reason="Tie promotion"), follow=True)
    assert response.status_code == 200
    approval = Approval.objects.get()
    assert any(f"request #{approval.pk}" in text and "second person" in text for text in messages_of(response))
    assert GameInstance.objects.get().tie_multiplier == 9
    assert approval.changes == {"tie_multiplier": {"before": "9.0000", "after": "8.0000"}}
    assert not AuditEvent.objects.filter(action="game.configured").exists()


def test_void_and_adjust_are_sent_for_approval(as_operator, dealt, player):
    as_operator.post(admin_url(dealt, "void"), {"reason": "Misdeal"})
    response = as_operator.post(admin_url(player, "adjust"), {"amount": "12000.00", "reason": "Jackpot"}, follow=True)
    assert sorted(Approval.objects.values_list("action", flat=True)) == ["account.adjust", "round.void"]
    held = Approval.objects.get(action="account.adjust")
    # The message names the amount in the account's currency and leads to the request that waits.
    link = f'<a href="{admin_url(held, "change")}">request #{held.pk}</a>'
    assert any(link in text and f"12,000.00 {player.currency}" in text for text in messages_of(response))
    dealt.refresh_from_db()
    assert dealt.status == RoundStatus.DEALT and Account.objects.get().balance == 490


def test_the_queue_shows_the_diff_and_the_exact_rtp_before_and_after(as_operator, as_second, game, dealt):
    as_operator.post(admin_url(game, "change"), change_form(game, banker_multiplier="1.9", reason="promo"))
    approval = Approval.objects.get()
    queue = as_second.get(admin_url(Approval)).content.decode()
    assert "banker multiplier: 1.9500 → 1.9000" in queue
    page = as_second.get(admin_url(approval, "change")).content.decode()
    assert "pf-rtp-diff" in page and "98.9421" in page and "96.6491" in page  # banker RTP, 8 decks
    assert admin_url(approval, "approve") in page


def test_the_second_person_approves_the_proposer_cannot(as_operator, as_second, dealt):
    as_operator.post(admin_url(dealt, "void"), {"reason": "Misdeal"})
    approval = Approval.objects.get()
    refused = as_operator.post(admin_url(approval, "approve"), {"reason": "mine"}, follow=True)
    assert any("cannot approve" in text for text in messages_of(refused))
    assert Approval.objects.get().status == "pending"
    as_second.post(admin_url(approval, "approve"), {"reason": "Seen the video"})
    dealt.refresh_from_db()
    assert dealt.status == RoundStatus.VOID and Approval.objects.get().status == "applied"


def test_reject_with_a_reason(as_operator, as_second, dealt):
    as_operator.post(admin_url(dealt, "void"), {"reason": "Misdeal"})
    approval = Approval.objects.get()
    assert as_second.post(admin_url(approval, "reject"), {"reason": ""}).status_code == 200  # asks again
    as_second.post(admin_url(approval, "reject"), {"reason": "No misdeal"})
    assert Approval.objects.get().status == "rejected"
    assert AuditEvent.objects.filter(action="approval.rejected", reason="No misdeal").exists()


def test_support_sees_the_queue_but_cannot_decide(as_operator, as_support, dealt):
    as_operator.post(admin_url(dealt, "void"), {"reason": "Misdeal"})
    approval = Approval.objects.get()
    assert as_support.get(admin_url(Approval)).status_code == 200
    assert as_support.post(admin_url(approval, "approve"), {"reason": "x"}).status_code == 403


def test_approving_needs_the_permission_of_the_action_too(as_operator, dealt):
    as_operator.post(admin_url(dealt, "void"), {"reason": "Misdeal"})
    approval = Approval.objects.get()
    approver = User.objects.create_user("only-approves", password="correct-horse-battery", is_staff=True)
    approver.user_permissions.add(*Permission.objects.filter(
        content_type__app_label="approvals", codename__in=["view_approval", "approve_approval"]))
    approver_client = client_for(approver)
    refused = approver_client.post(admin_url(approval, "approve"), {"reason": "Seen the video"}, follow=True)
    assert any("games.void_round" in text and "do not hold" in text for text in messages_of(refused))
    dealt.refresh_from_db()
    assert dealt.status == RoundStatus.DEALT and Approval.objects.get().status == "pending"
    approver.user_permissions.add(Permission.objects.get(content_type__app_label="games", codename="void_round"))
    approver_client.post(admin_url(approval, "approve"), {"reason": "Seen the video"})
    dealt.refresh_from_db()
    assert dealt.status == RoundStatus.VOID and Approval.objects.get().status == "applied"


def test_the_buttons_show_only_to_those_who_may_use_them(as_operator, as_second, as_support, dealt, operator):
    as_operator.post(admin_url(dealt, "void"), {"reason": "Misdeal"})
    approval = Approval.objects.get()
    approve, reject = admin_url(approval, "approve"), admin_url(approval, "reject")
    second = as_second.get(admin_url(approval, "change")).content.decode()
    assert approve in second and reject in second
    support = as_support.get(admin_url(approval, "change"))
    assert support.status_code == 200
    assert approve not in support.content.decode() and reject not in support.content.decode()
    assert "Approve…" not in support.content.decode() and "Reject…" not in support.content.decode()
    # The proposer may withdraw (reject) the request, never approve it.
    own = as_operator.get(admin_url(approval, "change")).content.decode()
    assert approve not in own and reject in own
    # Holding "approve" without the action's own permission offers Reject… only.
    approver = User.objects.create_user("only-approves", password="correct-horse-battery", is_staff=True)
    approver.user_permissions.add(*Permission.objects.filter(
        content_type__app_label="approvals", codename__in=["view_approval", "approve_approval"]))
    page = client_for(approver).get(admin_url(approval, "change")).content.decode()
    assert approve not in page and reject in page


def test_a_refusal_names_the_permission_actually_missing(as_operator, as_support, dealt):
    as_operator.post(admin_url(dealt, "void"), {"reason": "Misdeal"})
    approval = Approval.objects.get()
    for verb in ("approve", "reject"):
        response = as_support.post(admin_url(approval, verb), {"reason": "x"})
        assert response.status_code == 403
        page = response.content.decode()
        assert "<code>approvals.approve_approval</code>" in page and "approvals.view_approval" not in page
    assert Approval.objects.get().status == "pending"


def test_the_page_shows_the_proposal_beside_the_current_values(as_operator, as_second, game, dealt):
    as_operator.post(admin_url(game, "change"), change_form(game, max_bet="999.00", reason="a"))
    as_operator.post(admin_url(game, "change"), change_form(game, max_bet="600.00", reason="b"))
    stale, cut = Approval.objects.order_by("pk")
    as_second.post(admin_url(cut, "approve"), {"reason": "ok"})
    page = as_second.get(admin_url(stale, "change")).content.decode()
    assert "Proposed against" in page and "Now" in page
    assert "<td>1000.00</td><td>999.00</td><td>600.00<strong> (changed since proposed)</strong></td>" in page
    refused = as_second.post(admin_url(stale, "approve"), {"reason": "ok"}, follow=True)
    assert any("max bet" in text and "600.00" in text for text in messages_of(refused))
    assert GameInstance.objects.get().max_bet == 600 and Approval.objects.get(pk=stale.pk).status == "pending"


def test_a_new_active_game_is_sent_for_approval(as_operator, as_second):
    form = {**GAME_FORM, "reason": "Second table for the weekend"}
    response = as_operator.post(admin_url(GameInstance, "add"), form, follow=True)
    assert response.status_code == 200
    approval = Approval.objects.get()
    assert approval.action == "game.create"
    assert any(f"request #{approval.pk}" in text for text in messages_of(response))
    assert not GameInstance.objects.filter(slug="second-table").exists()
    page = as_second.get(admin_url(approval, "change")).content.decode()
    assert "new game second-table" in page and "pf-rtp-diff" in page
    as_second.post(admin_url(approval, "approve"), {"reason": "ok"})
    assert GameInstance.objects.get(slug="second-table").tie_multiplier == 8


def test_a_game_change_is_titled_by_the_games_slug_kept_when_proposed(as_operator, as_second, game, dealt):
    as_operator.post(admin_url(game, "change"), change_form(game, tie_multiplier="8.0", reason="Tie promotion"))
    approval = Approval.objects.get()
    assert approval.object_name == "main-table"
    assert approval.title == "Change game main-table: tie multiplier"
    queue = as_second.get(admin_url(Approval)).content.decode()
    assert "Change game main-table: tie multiplier" in queue and f"Change game {game.pk}" not in queue
    assert ">game instance main-table</a>" in queue  # the Object column names it too


def test_a_request_stored_before_names_were_kept_is_named_by_the_migration(as_operator, game, dealt):
    as_operator.post(admin_url(game, "change"), change_form(game, tie_multiplier="8.0", reason="Tie promotion"))
    Approval.objects.update(object_name="")  # as rows stored before the field
    assert Approval.objects.get().title == f"Change game #{game.pk}: tie multiplier"  # the title's fallback
    migration = importlib.import_module("approvals.migrations.0004_approval_object_name")
    migration.name_stored_game_requests(django_apps, None)
    assert Approval.objects.get().title == "Change game main-table: tie multiplier"
