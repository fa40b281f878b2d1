"""manage.py create_staff_user --totp: the second factor enrolled at once, its otpauth:// URI on a line
of its own (the person scans it), recovery codes, and the API token still on the last line."""

import time
from base64 import b32decode
from io import StringIO
from urllib.parse import parse_qs, urlparse

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from apitokens.models import ApiToken
from audit.models import AuditEvent
from tests.apitokens.helpers import token_of

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-enough-pass-phrase"


def run(*args, **options) -> list:
    out = StringIO()
    call_command("create_staff_user", *args, stdout=out, **options)
    return out.getvalue().splitlines()


def code_from(uri: str) -> str:
    """What the authenticator app that scanned the URI shows now."""
    secret = parse_qs(urlparse(uri).query)["secret"][0]
    totp = TOTP(b32decode(secret + "=" * (-len(secret) % 8)))
    totp.time = time.time()
    return f"{totp.token():06d}"


def test_totp_prints_the_uri_on_its_own_line_and_the_token_last():
    lines = run("newbie", role="operator", password=PASSWORD, totp=True)

    uris = [line for line in lines if line.startswith("otpauth://")]
    assert len(uris) == 1 and " " not in uris[0]
    uri = urlparse(uris[0])
    assert (uri.scheme, uri.netloc) == ("otpauth", "totp") and uri.path.endswith("%3Anewbie")
    assert parse_qs(uri.query)["issuer"] == ["Baccarat back-office"]
    assert token_of(lines[-1]) == ApiToken.objects.get(owner__username="newbie")
    assert TOTPDevice.objects.get(user__username="newbie").confirmed
    enrolled = AuditEvent.objects.get(action="auth.second_factor_enrolled")
    assert enrolled.actor == "system:create_staff_user" and enrolled.object_id == "newbie"
    assert parse_qs(uri.query)["secret"][0] not in str(enrolled.after)

    # The person signs in with the password and a code of the app that scanned it: no enrolment asked.
    client = Client()
    client.post("/admin/login/", {"username": "newbie", "password": PASSWORD})
    response = client.post("/admin/second-factor/", {"code": code_from(uris[0]), "next": "/admin/"})
    assert response["Location"] == "/admin/" and client.get("/admin/").status_code == 200


def test_without_totp_nothing_is_enrolled():
    lines = run("newbie", role="operator", password=PASSWORD)
    assert not any(line.startswith("otpauth://") for line in lines)
    assert not TOTPDevice.objects.exists()


def test_an_integration_client_has_no_second_factor():
    with pytest.raises(CommandError, match="--totp"):
        run("table-server", role="integration", password=PASSWORD, totp=True)
