"""The second factor under attack: codes sent at once (one code, one recovery code, many wrong codes),
codes replayed, hostile bodies to POST /api/v1/auth/step-up/, and the sign-in guessed in parallel.
Races run in real threads, each with its own PostgreSQL connection."""

import threading

import pytest
from django.contrib.auth.backends import ModelBackend
from django.test import Client
from django.urls import reverse
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.test import APIClient

from audit.choices import AuditAction
from audit.models import AuditEvent
from backoffice import lockout, second_factor
from tests.api.helpers import API, assert_names_field
from tests.conftest import api_client_for, totp_code, totp_device, verified_login
from tests.races import together

STEP_UP = f"{API}/auth/step-up/"
PASSWORD = "correct-horse-battery"


@pytest.fixture(params=["memory", "redis"])
def shared_cache(request):
    """The lock-out counts in each process's memory, or in the production cache (Redis) that every
    web process shares."""
    if request.param == "redis":
        request.getfixturevalue("redis_cache")


def stale_session(user) -> APIClient:
    """A verified session of ``user`` whose code was entered too long ago for a step-up."""
    return verified_login(APIClient(), user, fresh=False)


def step_up(client, code):
    return lambda: client.post(STEP_UP, {"code": code}, format="json")


def outcomes(username) -> list:
    return sorted(e.after["outcome"] for e in AuditEvent.objects.filter(action=AuditAction.STEP_UP,
                                                                         object_id=username))


def is_fresh_now(client) -> bool:
    """Whether the client's session passes a write that asks for a fresh factor (as a token list does)."""
    return client.post(f"{API}/api-tokens/", {"owner": "nobody-here"}, format="json").status_code == 400


@pytest.mark.django_db(transaction=True)
def test_one_code_sent_by_two_sessions_at_once_passes_once(postgres, administrator):
    device = totp_device(administrator)
    clients = [stale_session(administrator) for _ in range(3)]
    code = totp_code(device)
    answers = together([step_up(client, code) for client in clients])
    assert sorted(answer.status_code for answer in answers) == [200, 400, 400]
    assert sum(is_fresh_now(client) for client in clients) == 1


@pytest.mark.django_db(transaction=True)
def test_one_recovery_code_sent_at_once_passes_once(postgres, administrator):
    totp_device(administrator)
    code = second_factor._recovery_codes(administrator)[0]
    clients = [stale_session(administrator) for _ in range(4)]
    answers = together([step_up(client, code) for client in clients])
    assert sorted(answer.status_code for answer in answers) == [200, 400, 400, 400]
    assert outcomes(administrator.username).count("recovery_code") == 1


@pytest.mark.django_db(transaction=True)
def test_wrong_codes_sent_at_once_get_no_more_checks_than_the_limit(postgres, administrator, settings,
                                                                   shared_cache):
    settings.LOGIN_FAILURE_LIMIT = 3
    totp_device(administrator)
    second_factor._recovery_codes(administrator)
    clients = [stale_session(administrator) for _ in range(12)]
    guesses = [f"{index:06d}" if index % 2 else f"zzzzz-zzz{index:02d}" for index in range(12)]
    answers = together([step_up(client, guess) for client, guess in zip(clients, guesses, strict=True)])
    codes = sorted(answer.status_code for answer in answers)
    assert codes.count(400) <= 3 and codes.count(200) == 0 and set(codes) <= {400, 429}, codes
    checked = outcomes(administrator.username)
    assert checked.count("wrong_code") == codes.count(400) <= 3
    assert lockout.second_factor_locked(administrator.username)
    right = stale_session(administrator).post(STEP_UP, {"code": totp_code(totp_device(administrator))},
                                              format="json")
    assert right.status_code == 429  # locked: not even the right code is checked


@pytest.mark.django_db
def test_a_code_used_for_a_step_up_is_refused_the_second_time(administrator):
    code = totp_code(totp_device(administrator))
    client = stale_session(administrator)
    assert client.post(STEP_UP, {"code": code}, format="json").status_code == 200
    replay = stale_session(administrator).post(STEP_UP, {"code": code}, format="json")
    assert_names_field(replay, 400, "code")


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "field"), [
    ({"code": 123456}, "code"),
    ({"code": None}, "code"),
    ({"code": ["123456"]}, "code"),
    ({"code": {"totp": "123456"}}, "code"),
    ({"code": True}, "code"),
    ({"code": "1" * 33}, "code"),
    ({"code": ""}, "code"),
    ({}, "code"),
    ({"code": "123456", "remember": True}, "remember"),
])
def test_a_step_up_body_that_is_no_code_is_a_400_naming_it(administrator, body, field):
    totp_device(administrator)
    client = stale_session(administrator)
    assert_names_field(client.post(STEP_UP, body, format="json"), 400, field)
    assert not is_fresh_now(client)


@pytest.mark.django_db
def test_the_code_in_other_digits_is_not_the_code(administrator):
    code = totp_code(totp_device(administrator))
    other_digits = code.translate(str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667"
                                                              "\u0668\u0669"))
    client = stale_session(administrator)
    for variant in (other_digits, code.translate(str.maketrans("0123456789", "０１２３４５６７８９"))):
        assert_names_field(client.post(STEP_UP, {"code": variant}, format="json"), 400, "code")
    assert not is_fresh_now(client)


@pytest.mark.django_db
@pytest.mark.parametrize(("content_type", "body", "status"), [
    ("application/x-www-form-urlencoded", "code=123456", 415),
    ("text/plain", '{"code": "123456"}', 415),
    ("application/json", '{"code": "12345\\u0000"}', 400),
    ("application/json", '{"code": "\\ud800"}', 400),
    ("application/json", "[" * 10000 + "]" * 10000, 400),
    ("application/json", '{"code": ' * 5000 + "1" + "}" * 5000, 400),
])
def test_a_step_up_body_that_is_not_json_text_is_refused_as_json(administrator, content_type, body, status):
    totp_device(administrator)
    client = stale_session(administrator)
    response = client.generic("POST", STEP_UP, body, content_type=content_type)
    assert response.status_code == status and response.json(), response.content
    assert not is_fresh_now(client)


@pytest.mark.django_db
def test_a_step_up_without_a_session_is_refused_as_json(administrator):
    for client, status in [(APIClient(), 401), (api_client_for(administrator), 403)]:
        response = client.post(STEP_UP, {"code": "123456"}, format="json")
        assert response.status_code in (status, 403) and "detail" in response.json(), response.content
    for method in ("GET", "PUT", "DELETE"):
        response = stale_session(administrator).generic(method, STEP_UP)
        assert response.status_code == 405 and "detail" in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("code", ["12345\x00", "\u202e123456", "x" * 10000, "\u200b123456"])
def test_the_second_factor_page_answers_a_hostile_code_with_a_form_error(administrator, code):
    totp_device(administrator)
    client = Client()
    client.post(reverse("admin:login"), {"username": administrator.username, "password": PASSWORD})
    response = client.post("/admin/second-factor/", {"code": code})
    if "\x00" in code:  # the request guard refuses a NUL in any form with a 400 page
        assert response.status_code == 400
    else:
        assert response.status_code == 200 and response.context["form"].errors["code"]
    assert client.get("/admin/").status_code == 302  # still not verified


def enrolling_tabs(user, count: int) -> list:
    """``count`` sessions of ``user``, each signed in with the password and shown the enrolment."""
    tabs = []
    for _ in range(count):
        client = Client()
        client.post(reverse("admin:login"), {"username": user.username, "password": PASSWORD})
        assert client.get("/admin/second-factor/").context["mode"] == "enrol"
        tabs.append(client)
    return tabs


@pytest.mark.django_db(transaction=True)
def test_one_enrolment_code_sent_at_once_enrols_once(postgres, operator):
    from django_otp.oath import TOTP

    sessions = enrolling_tabs(operator, 3)
    device = TOTPDevice.objects.get(user=operator, confirmed=False)
    code = f"{TOTP(device.bin_key).token():06d}"
    answers = together([lambda c=c: c.post("/admin/second-factor/", {"code": code}) for c in sessions])
    # (A test client's context collects the templates every thread renders: the pages' text is read.)
    from django_otp.plugins.otp_static.models import StaticToken

    assert all(answer.status_code == 200 for answer in answers)
    codes = [f"{token[:5]}-{token[5:]}" for token in StaticToken.objects.values_list("token", flat=True)]
    shown = [answer for answer in answers if any(code in answer.content.decode() for code in codes)]
    assert len(codes) == 10 and len(shown) == 1
    assert TOTPDevice.objects.filter(user=operator).count() == 1 and second_factor.is_enrolled(operator)
    assert AuditEvent.objects.filter(action=AuditAction.SECOND_FACTOR_ENROLLED).count() == 1


@pytest.mark.django_db
def test_a_tab_whose_enrolment_another_tab_confirmed_meanwhile_asks_for_a_code(operator, monkeypatch):
    """The interleaving behind the race above, made certain: this tab reads the person as not yet
    enrolled, and the other tab confirms the enrolment just after. No second enrolment device is
    made, the code is not counted as a wrong one, and this tab asks for a code, as at sign-in."""
    tabs = enrolling_tabs(operator, 2)
    code = totp_code(TOTPDevice.objects.get(user=operator, confirmed=False))
    is_enrolled = second_factor.is_enrolled

    def read_then_other_tab_confirms(user):
        monkeypatch.setattr(second_factor, "is_enrolled", is_enrolled)
        enrolled = is_enrolled(user)
        assert tabs[0].post("/admin/second-factor/", {"code": code}).status_code == 200
        return enrolled

    monkeypatch.setattr(second_factor, "is_enrolled", read_then_other_tab_confirms)
    page = tabs[1].post("/admin/second-factor/", {"code": code}).content.decode()
    # (Read from the page: this response's context also holds the other tab's, rendered inside it.)
    assert "Enter the 6-digit code of your authenticator app, or one" in page
    assert "totp-secret" not in page and "recovery-codes" not in page
    assert list(TOTPDevice.objects.filter(user=operator).values_list("confirmed", flat=True)) == [True]
    assert second_factor.enrolment_device(operator) is None
    checked = AuditEvent.objects.filter(action=AuditAction.SECOND_FACTOR, object_id=operator.username)
    assert [event.after["outcome"] for event in checked] == []  # the confirmation is its own event
    assert AuditEvent.objects.filter(action=AuditAction.SECOND_FACTOR_ENROLLED).count() == 1


@pytest.mark.django_db(transaction=True)
def test_passwords_guessed_at_once_get_no_more_checks_than_the_limit(postgres, operator, settings, monkeypatch,
                                                                    shared_cache):
    settings.LOGIN_FAILURE_LIMIT = 3
    checked, lock = [], threading.Lock()
    original = ModelBackend.authenticate

    def counted(self, request, username=None, password=None, **kwargs):
        with lock:
            checked.append(password)
        return original(self, request, username=username, password=password, **kwargs)

    monkeypatch.setattr(ModelBackend, "authenticate", counted)
    guesses = [f"guess-{index}" for index in range(12)]
    answers = together([lambda g=g: Client(REMOTE_ADDR="198.51.100.7").post(
        reverse("admin:login"), {"username": operator.username, "password": g}) for g in guesses])
    assert all(answer.status_code == 200 for answer in answers)
    assert len(checked) <= 3, checked
    right = Client(REMOTE_ADDR="198.51.100.7").post(reverse("admin:login"),
                                                    {"username": operator.username, "password": PASSWORD})
    assert right.status_code == 200 and "locked" in right.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(("username", "password"), [
    ("olivia-operator\x00", PASSWORD), ("olivia-operator", "x\x00y"), ("\u202eolivia", PASSWORD),
    ("o" * 10000, PASSWORD), ("olivia-operator", "p" * 100000), ("", ""), ("olivia-operator\r\nX: y", PASSWORD),
])
def test_the_sign_in_page_answers_hostile_input_with_a_form_error(operator, username, password):
    response = Client().post(reverse("admin:login"), {"username": username, "password": password})
    assert response.status_code in (200, 400), response.status_code
    assert "_auth_user_id" not in Client().session
