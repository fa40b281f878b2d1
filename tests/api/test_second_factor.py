"""The second factor and step-up in the API: a session's calls need the factor verified, its writes
that approve, reject, adjust or void a fresh one (POST /api/v1/auth/step-up/); a token's calls need
neither (game servers and scripts have no second factor)."""

import pytest
from rest_framework.test import APIClient

from approvals.models import Approval
from audit.choices import AuditAction
from audit.models import AuditEvent
from backoffice import second_factor
from games import services as game_services
from tests.api.helpers import API
from tests.conftest import make_user, totp_code, totp_device, verified_login

pytestmark = pytest.mark.django_db

STEP_UP = f"{API}/auth/step-up/"


@pytest.fixture
def player(funded_account):
    return funded_account("player-1", "500.00")


@pytest.fixture
def dealt_round(game, player, integration):
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.bet_place(round_id=round_.pk, account_external_id=player.external_id, bet_type="BANKER",
                            stake="10.00", idempotency_key="k1", client=integration)
    return game_services.round_deal(round_id=round_.pk, actor=integration)


@pytest.fixture
def pending(api_as, operator, player):
    response = api_as(operator).post(f"{API}/accounts/{player.external_id}/adjust/",
                                     {"amount": "12000.00", "reason": "Jackpot"})
    assert response.status_code == 202
    return Approval.objects.get()


def writes(player, dealt_round, pending) -> list:
    return [(f"{API}/accounts/{player.external_id}/adjust/", {"amount": "5.00", "reason": "goodwill"}),
            (f"{API}/rounds/{dealt_round.pk}/void/", {"reason": "misdeal"}),
            (f"{API}/approvals/{pending.pk}/approve/", {"reason": "ok"}),
            (f"{API}/approvals/{pending.pk}/reject/", {"reason": "no"}),
            (f"{API}/api-tokens/", {"owner": "ada-admin", "scopes": ["read"]})]


def test_each_write_of_a_stale_session_needs_a_step_up(administrator, player, dealt_round, pending):
    client = verified_login(APIClient(), administrator, fresh=False)
    for path, body in writes(player, dealt_round, pending):
        response = client.post(path, body, format="json")
        assert response.status_code == 403, (path, response.content)
        assert "fresh second factor" in response.json()["detail"] and "/auth/step-up/" in response.json()["detail"]
    assert client.get(f"{API}/approvals/").status_code == 200  # reads need no step-up
    assert Approval.objects.get().status == "pending"


def test_a_step_up_lets_the_write_through(administrator, player):
    client = verified_login(APIClient(), administrator, fresh=False)
    adjust = f"{API}/accounts/{player.external_id}/adjust/"
    assert client.post(adjust, {"amount": "5.00", "reason": "goodwill"}, format="json").status_code == 403

    wrong = client.post(STEP_UP, {"code": "000000"}, format="json")
    assert wrong.status_code == 400 and "code" in wrong.json()
    assert client.post(STEP_UP, {}, format="json").json() == {"code": ["This field is required."]}
    right = client.post(STEP_UP, {"code": totp_code(totp_device(administrator))}, format="json")
    assert right.status_code == 200 and "fresh_until" in right.json()
    assert client.post(adjust, {"amount": "5.00", "reason": "goodwill"}, format="json").status_code == 201

    outcomes = [(e.after["outcome"], e.source_ip) for e in AuditEvent.objects.filter(action=AuditAction.STEP_UP)
                .order_by("id")]
    assert [outcome for outcome, _ in outcomes] == ["wrong_code", "succeeded"]
    assert all(ip for _, ip in outcomes)


def test_step_up_codes_are_locked_out_like_passwords(administrator, settings):
    settings.LOGIN_FAILURE_LIMIT = 2
    client = verified_login(APIClient(), administrator, fresh=False)
    for _ in range(2):
        assert client.post(STEP_UP, {"code": "000000"}, format="json").status_code == 400
    locked = client.post(STEP_UP, {"code": totp_code(totp_device(administrator))}, format="json")
    assert locked.status_code == 429 and "locked" in locked.json()["code"][0]
    assert AuditEvent.objects.filter(action=AuditAction.LOGIN_LOCKED_OUT, after__outcome="second_factor_locked",
                                     object_id="ada-admin").count() == 1


def test_a_token_needs_no_second_factor(api_as, administrator, player, dealt_round):
    client = api_as(administrator)
    assert client.post(f"{API}/accounts/{player.external_id}/adjust/", {"amount": "5.00", "reason": "x"},
                       format="json").status_code == 201
    assert client.post(f"{API}/rounds/{dealt_round.pk}/void/", {"reason": "x"}, format="json").status_code == 202
    step_up = client.post(STEP_UP, {"code": "123456"}, format="json")
    assert step_up.status_code == 403  # a token has no second factor to enter


def test_a_password_only_session_cannot_step_up(operator):
    totp_device(operator)  # enrolled: the session waits for its code
    client = APIClient()
    assert client.post("/admin/login/", {"username": operator.username, "password": "correct-horse-battery"},
                       format="multipart").status_code == 302
    response = client.post(STEP_UP, {"code": "123456"}, format="json")
    assert response.status_code == 401 and "second factor" in response.json()["detail"]


def test_the_second_person_approves_after_a_step_up(player, pending):
    second = make_user("oscar-operator", None)
    second.is_superuser = second.is_staff = True
    second.save()
    client = verified_login(APIClient(), second, fresh=False)
    approve = f"{API}/approvals/{pending.pk}/approve/"
    assert client.post(approve, {"reason": "ok"}, format="json").status_code == 403
    assert client.post(STEP_UP, {"code": totp_code(totp_device(second))}, format="json").status_code == 200
    assert client.post(approve, {"reason": "ok"}, format="json").status_code == 200
    assert Approval.objects.get().status == "applied"
    assert second_factor.VERIFIED_AT in client.session
