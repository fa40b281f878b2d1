"""Step-up in the admin (backoffice.step_up): approving, rejecting, adjusting, voiding, changing roles,
issuing tokens and resetting a second factor ask for a code entered within STEP_UP_MINUTES."""

from urllib.parse import quote

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from approvals.models import Approval
from audit.choices import AuditAction
from audit.models import AuditEvent
from backoffice import staff_sessions
from games import services as game_services
from tests.admin.helpers import admin_url
from tests.conftest import totp_code, totp_device, verified_login

pytestmark = pytest.mark.django_db

STEP_UP = "/admin/second-factor/step-up/"


@pytest.fixture
def dealt(play, player, integration):
    round_ = play(bets=[(player, "BANKER", "10.00")], deal=False)
    return game_services.round_deal(round_id=round_.pk, actor=integration)


@pytest.fixture
def pending(as_operator, player):
    """An adjustment over the threshold, proposed by the operator: waiting for a second person."""
    as_operator.post(admin_url(player, "adjust"), {"amount": "12000.00", "reason": "Jackpot"})
    return Approval.objects.get()


@pytest.fixture
def stale(administrator):
    """The administrator, signed in with the second factor entered longer ago than STEP_UP_MINUTES."""
    return verified_login(Client(), administrator, fresh=False)


def step_up_pages(player, dealt, pending, operator):
    pages = [admin_url(player, "adjust"), admin_url(dealt, "void"), admin_url(pending, "approve"),
             admin_url(pending, "reject"), reverse("admin:auth_user_change", args=[operator.pk]),
             reverse("admin:auth_user_add"), reverse("admin:auth_group_add"),
             reverse("admin:auth_group_change", args=[Group.objects.get(name="Operators").pk]),
             reverse("admin:apitokens_apitoken_add")]  # issuing a token
    return pages


def test_each_action_asks_for_a_fresh_second_factor(stale, player, dealt, pending, operator):
    for path in step_up_pages(player, dealt, pending, operator):
        for method in (stale.get, stale.post):
            response = method(path)
            assert response.status_code == 302, (path, response.status_code)
            assert response["Location"] == f"{STEP_UP}?next={quote(path, safe='')}", path
    assert Approval.objects.get().status == "pending"


@pytest.mark.parametrize("action", ["void_rounds", "adjust_balance", "reset_second_factor"])
def test_list_actions_ask_for_it_too(stale, dealt, player, operator, action):
    target = {"void_rounds": dealt, "adjust_balance": player, "reset_second_factor": operator}[action]
    changelist = admin_url(target)
    response = stale.post(changelist, {"action": action, "_selected_action": [target.pk], "apply": "1",
                                       "reason": "r", "amount": "1.00"})
    assert response["Location"] == f"{STEP_UP}?next={quote(changelist, safe='')}"
    assert not AuditEvent.objects.filter(action__in=["round.voided", "account.adjusted",
                                                     AuditAction.SECOND_FACTOR_RESET], actor="ada-admin").exists()


def test_a_code_at_the_step_up_page_lets_the_action_through(stale, administrator, pending):
    approve = admin_url(pending, "approve")
    back = stale.get(approve)["Location"]
    page = stale.get(back)
    assert page.status_code == 200 and page.context["mode"] == "step_up"
    assert stale.post(back, {"code": "000001"}).status_code == 200  # wrong
    response = stale.post(back, {"code": totp_code(totp_device(administrator)), "next": approve})
    assert response["Location"] == approve
    assert stale.post(approve, {"reason": "Checked the jackpot"}).status_code == 302
    assert Approval.objects.get().status == "applied"
    outcomes = [e.after["outcome"] for e in AuditEvent.objects.filter(action=AuditAction.STEP_UP).order_by("id")]
    assert outcomes == ["wrong_code", "succeeded"]


def test_the_code_of_the_log_in_counts_for_step_up_minutes(administrator, pending, monkeypatch, settings):
    client = verified_login(Client(), administrator)  # the code entered just now
    now = staff_sessions.clock()
    assert client.get(admin_url(pending, "approve")).status_code == 200
    monkeypatch.setattr(staff_sessions, "clock", lambda: now + 5 * 60 + 1)
    assert client.get(admin_url(pending, "approve")).status_code == 302
    settings.STEP_UP_MINUTES = 10
    assert client.get(admin_url(pending, "approve")).status_code == 200


def test_a_reader_reads_users_without_stepping_up(regulator, operator):
    client = verified_login(Client(), regulator, fresh=False)
    assert client.get(reverse("admin:auth_user_change", args=[operator.pk])).status_code == 200
    assert client.get(reverse("admin:auth_user_changelist")).status_code == 200
