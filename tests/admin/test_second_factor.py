"""The second factor in the admin (backoffice.second_factor): nothing before it, enrolment at first
log-in with recovery codes, codes used once, wrong codes locked out like passwords, a reset by an
administrator that ends the person's sessions, and every outcome in the authentication log."""

import re
from base64 import b32decode

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, reverse
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.choices import AuditAction
from audit.models import AuditEvent
from backoffice import lockout, second_factor
from tests.conftest import log_in_through_pages, totp_code, totp_device, verified_login

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery"
SECOND_FACTOR = "/admin/second-factor/"


def password_only(user, **extra) -> Client:
    """A session signed in with the password alone, through the log-in page."""
    client = Client(**extra)
    response = client.post(reverse("admin:login"), {"username": user.get_username(), "password": PASSWORD,
                                                    "next": "/admin/"})
    assert response.status_code == 302 and response["Location"] == "/admin/"
    return client


def code_at(secret_base32: str, steps_ahead: int = 0) -> str:
    """What an authenticator app holding the secret shows (the enrolment page's key, as typed)."""
    import time

    totp = TOTP(b32decode(secret_base32.replace(" ", "") + "=" * (-len(secret_base32.replace(" ", "")) % 8)))
    totp.time = time.time() + 30 * steps_ahead
    return f"{totp.token():06d}"


def events(action, username) -> list:
    return list(AuditEvent.objects.filter(action=action, object_id=username).order_by("id"))


# --- Nothing before the second factor ---------------------------------------------------------------

def admin_paths():
    """Every route of the admin with its parameters filled in (an id, a model, an app label)."""
    def walk(patterns, prefix):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns, prefix + str(entry.pattern))
            elif isinstance(entry, URLPattern):
                route = prefix + str(entry.pattern)
                route = re.sub(r"<path:\w+>|<int:\w+>|<id:\w+>|<str:\w+>", "1", route)
                route = re.sub(r"\^\(\?P<app_label>([a-z_]+)[^)]*\)", r"\1", route)
                route = re.sub(r"\(\?P<url>\.\*\)", "no-such-page/", route).lstrip("^").rstrip("$")
                yield entry.name, "/admin/" + route.lstrip("^").replace("^", "").replace("$", "")
    return sorted(set(walk(admin.site.get_urls(), "")), key=lambda entry: entry[1])


OPEN_WITHOUT_IT = {"login", "logout", "second_factor"}  # where the code is entered, and the way out


def test_every_admin_url_sends_a_password_only_session_to_the_second_factor(administrator):
    paths = admin_paths()
    assert len(paths) > 150  # every model's list, add, change, history, delete and the site's own pages
    client = password_only(administrator)
    walked = 0
    for name, path in paths:
        if name in OPEN_WITHOUT_IT:
            continue
        for method in (client.get, client.post):
            response = method(path)
            assert response.status_code == 302, (method.__name__, path, response.status_code)
            assert response["Location"].startswith(SECOND_FACTOR), (path, response["Location"])
            walked += 1
    assert walked > 300
    # The same session, once the code is in, is let through.
    verified_login(client, administrator)
    assert client.get("/admin/games/round/").status_code == 200


def test_the_log_in_page_sends_a_password_only_session_on_to_the_code(operator):
    client = password_only(operator)
    response = client.get(reverse("admin:login") + "?next=/admin/games/round/")
    assert response["Location"] == SECOND_FACTOR + "?next=%2Fadmin%2Fgames%2Fround%2F"
    assert client.post(reverse("admin:logout")).status_code == 200  # logging out needs no code
    assert client.get("/admin/")["Location"].startswith(reverse("admin:login"))


def test_no_session_api_call_works_before_the_second_factor(operator, api_as, game):
    client = password_only(operator)
    for path in ("/api/v1/games/", f"/api/v1/games/{game.slug}/", "/api/v1/approvals/", "/api/v1/auth-events/"):
        response = client.get(path)
        assert response.status_code == 401, path
        assert "second factor" in response.json()["detail"]
    assert client.post("/api/v1/accounts/", {"external_id": "p-9", "currency": "USD"},
                       content_type="application/json").status_code == 401
    verified_login(client, operator)
    assert client.get("/api/v1/games/").status_code == 200
    assert api_as(operator).get("/api/v1/games/").status_code == 200  # a token has no second factor


# --- Enrolment at first log-in ----------------------------------------------------------------------

def test_enrolment_at_first_log_in_with_recovery_codes(operator):
    client = password_only(operator, HTTP_USER_AGENT="pytest-browser")
    response = client.get("/admin/")
    assert response["Location"] == SECOND_FACTOR + "?next=%2Fadmin%2F"
    page = client.get(response["Location"])
    assert page.status_code == 200 and page.context["mode"] == "enrol"
    assert page.context["qr_code"].startswith("data:image/svg+xml")
    secret = page.context["secret"]
    assert secret in page.content.decode()
    assert client.get(response["Location"]).context["secret"] == secret  # a reload shows the same device

    wrong = client.post(SECOND_FACTOR, {"code": "000000" if code_at(secret) != "000000" else "111111"})
    assert wrong.status_code == 200 and "Wrong code" in wrong.content.decode()
    assert not TOTPDevice.objects.filter(user=operator, confirmed=True).exists()

    right = code_at(secret)
    done = client.post(SECOND_FACTOR, {"code": right, "next": "/admin/"})
    assert done.status_code == 200 and done.context["mode"] == "recovery_codes"
    codes = done.context["codes"]
    assert len(codes) == 10 and len(set(codes)) == 10 and all(code in done.content.decode() for code in codes)
    assert done["Cache-Control"].startswith("max-age=0")
    assert client.get("/admin/").status_code == 200  # the session that enrolled goes on

    device = TOTPDevice.objects.get(user=operator)
    assert device.confirmed and StaticDevice.objects.get(user=operator).token_set.count() == 10
    enrolled = events(AuditAction.SECOND_FACTOR_ENROLLED, operator.username)
    failed = events(AuditAction.SECOND_FACTOR, operator.username)
    assert len(enrolled) == 1 and enrolled[0].after["outcome"] == "enrolled"
    assert [e.after["outcome"] for e in failed] == ["wrong_code"] and failed[0].after["purpose"] == "enrolment"
    assert failed[0].after["user_agent"] == "pytest-browser"
    written = str(list(AuditEvent.objects.values_list("after", flat=True)))
    assert right not in written and secret.replace(" ", "") not in written and codes[0] not in written


def test_a_later_log_in_asks_for_the_code_and_takes_each_code_once(operator):
    device = totp_device(operator)
    first = password_only(operator)
    assert first.get(SECOND_FACTOR).context["mode"] == "verify"
    code = totp_code(device)
    assert first.post(SECOND_FACTOR, {"code": code, "next": "/admin/"})["Location"] == "/admin/"
    assert first.get("/admin/").status_code == 200

    second = password_only(operator)
    replay = second.post(SECOND_FACTOR, {"code": code})
    assert replay.status_code == 200 and replay.context["form"].errors["code"]
    assert second.get("/admin/").status_code == 302
    outcomes = [e.after["outcome"] for e in events(AuditAction.SECOND_FACTOR, operator.username)]
    assert outcomes == ["succeeded", "wrong_code"]


def test_a_recovery_code_signs_in_once(operator):
    totp_device(operator)
    codes = second_factor._recovery_codes(operator)
    client = password_only(operator)
    response = client.post(SECOND_FACTOR, {"code": codes[3].upper(), "next": "/admin/"})
    assert response["Location"] == "/admin/" and client.get("/admin/").status_code == 200
    again = password_only(operator)
    assert again.post(SECOND_FACTOR, {"code": codes[3]}).status_code == 200
    assert again.get("/admin/").status_code == 302
    used = events(AuditAction.SECOND_FACTOR, operator.username)
    assert [(e.after["outcome"], e.after.get("recovery_codes_left")) for e in used] == [
        ("recovery_code", 9), ("wrong_code", None)]


# --- Brute force ------------------------------------------------------------------------------------

def test_wrong_codes_lock_the_second_factor_like_passwords(operator, administrator, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    device = totp_device(operator)
    client = password_only(operator, REMOTE_ADDR="198.51.100.7")
    right = totp_code(device)
    wrong = "123456" if right != "123456" else "654321"
    for _ in range(3):
        assert client.post(SECOND_FACTOR, {"code": wrong}).status_code == 200
    assert lockout.second_factor_locked(operator.username)
    refused = client.post(SECOND_FACTOR, {"code": right})
    assert "locked" in refused.content.decode() and client.get("/admin/").status_code == 302
    elsewhere = password_only(operator, REMOTE_ADDR="203.0.113.50")  # a code is not locked per address
    assert elsewhere.post(SECOND_FACTOR, {"code": right}).status_code == 200

    locked = events(AuditAction.LOGIN_LOCKED_OUT, operator.username)
    assert [e.after["outcome"] for e in locked] == ["second_factor_locked"]
    outcomes = [e.after["outcome"] for e in events(AuditAction.SECOND_FACTOR, operator.username)]
    assert outcomes == ["wrong_code"] * 3 + ["code_refused_locked"] * 2

    # An administrator's "Unlock log-ins" ends it.
    lockout.unlock(operator.username, by=administrator, user=operator)
    assert client.post(SECOND_FACTOR, {"code": right, "next": "/admin/"})["Location"] == "/admin/"


# --- Reset by an administrator ----------------------------------------------------------------------

def test_an_administrator_resets_a_second_factor_and_the_person_s_sessions_end(operator, administrator, as_admin):
    desk, laptop = verified_login(Client(), operator), verified_login(Client(), operator)
    assert desk.get("/admin/").status_code == laptop.get("/api/v1/games/").status_code == 200

    response = as_admin.post(reverse("admin:auth_user_changelist"),
                             {"action": "reset_second_factor", "_selected_action": [operator.pk]})
    assert response.status_code == 302

    assert not TOTPDevice.objects.filter(user=operator).exists()
    assert not StaticDevice.objects.filter(user=operator).exists()
    assert desk.get("/admin/")["Location"].startswith(reverse("admin:login"))
    assert laptop.get("/api/v1/games/").status_code == 401
    assert as_admin.get("/admin/").status_code == 200
    reset = events(AuditAction.SECOND_FACTOR_RESET, operator.username)
    assert len(reset) == 1 and reset[0].actor == administrator.username and reset[0].after["by"] == "ada-admin"
    # At the next log-in the person enrols again.
    assert password_only(operator).get(SECOND_FACTOR).context["mode"] == "enrol"


def test_only_administrators_may_reset(as_operator, as_regulator, support):
    for client in (as_operator, as_regulator):
        response = client.post(reverse("admin:auth_user_changelist"),
                               {"action": "reset_second_factor", "_selected_action": [support.pk]})
        assert response.status_code in (200, 302, 403)  # no such action for them, or refused
    assert not AuditEvent.objects.filter(action=AuditAction.SECOND_FACTOR_RESET).exists()


def test_the_device_pages_of_django_otp_are_not_served(as_admin):
    assert not admin.site.is_registered(TOTPDevice) and not admin.site.is_registered(StaticDevice)
    assert as_admin.get("/admin/otp_totp/totpdevice/").status_code == 404


def test_log_in_through_the_pages_records_the_password_and_the_code(operator):
    log_in_through_pages(Client(), operator)
    assert [e.after["outcome"] for e in events(AuditAction.LOGGED_IN, operator.username)] == ["succeeded"]
    assert [e.after["purpose"] for e in events(AuditAction.SECOND_FACTOR, operator.username)] == ["log_in"]
    assert User.objects.get(pk=operator.pk).last_login is not None
