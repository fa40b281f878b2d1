"""No API token, TOTP secret, one-time code, recovery code or password appears in the log lines
(LOG_FORMAT=json, every logger at DEBUG) or in the audit trail, through the whole life of each:
made, refused, rotated, revoked; enrolled, entered wrong, entered right, used up."""

import io
import json
import logging
from base64 import b32encode

import pytest
from django.test import Client
from django.urls import reverse
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.test import APIClient

from audit.log_lines import ContextFilter, JsonFormatter
from audit.models import AuditEvent
from backoffice import second_factor
from tests.api.helpers import API
from tests.conftest import api_client_for, totp_code, totp_device, verified_login

pytestmark = pytest.mark.django_db
PASSWORD = "correct-horse-battery"


@pytest.fixture
def json_log_lines(settings):
    """Every record of every logger, written as LOG_FORMAT=json writes it."""
    settings.LOG_REQUESTS = True
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    saved = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield stream
    root.removeHandler(handler)
    root.setLevel(saved)


def pieces(secret: str) -> list:
    """The secret and its middle part (a log that cut or wrapped it would still hold that)."""
    secret = secret.replace(" ", "").replace("-", "")
    return [secret, secret[len(secret) // 4: len(secret) // 4 + 12]]


def test_no_secret_reaches_the_logs_or_the_audit_trail(json_log_lines, administrator, operator, integration):
    secrets = []
    admin_api = api_client_for(administrator)
    made = admin_api.post(f"{API}/api-tokens/", {"owner": "game-server", "scopes": ["bets"], "label": "t1"},
                          format="json").json()
    secrets.append(made["token"])
    game_server = APIClient()
    game_server.credentials(HTTP_AUTHORIZATION=f"Token {made['token']}")
    game_server.get(f"{API}/games/")  # refused: beyond its scopes
    rotated = admin_api.post(f"{API}/api-tokens/{made['api_token']['id']}/rotate/", {"overlap_hours": 0},
                             format="json").json()
    secrets.append(rotated["token"])
    game_server.get(f"{API}/games/")  # refused: expired
    admin_api.post(f"{API}/api-tokens/{rotated['api_token']['id']}/revoke/")
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION=f"Token {rotated['token']}")
    wrong.get(f"{API}/games/")  # refused: revoked
    unknown = "bo_" + "Q" * 40
    secrets.append(unknown)
    wrong.credentials(HTTP_AUTHORIZATION=f"Token {unknown}")
    wrong.get(f"{API}/games/")

    # The operator enrols through the pages, enters a wrong code, then a right one, then a recovery code.
    client = Client()
    client.post(reverse("admin:login"), {"username": operator.username, "password": PASSWORD})
    client.post(reverse("admin:login"), {"username": operator.username, "password": "wrong-" + PASSWORD})
    client.get("/admin/second-factor/")
    device = TOTPDevice.objects.get(user=operator, confirmed=False)
    secrets.append(b32encode(device.bin_key).decode())
    secrets.append(device.key)
    code = totp_code(device)
    done = client.post("/admin/second-factor/", {"code": code})
    codes = done.context["codes"]
    secrets.extend(codes)
    stale = verified_login(APIClient(), operator, fresh=False)
    stale.post(f"{API}/auth/step-up/", {"code": "zzzzz-zzzzz"}, format="json")
    stale.post(f"{API}/auth/step-up/", {"code": codes[0]}, format="json")
    stale.post(f"{API}/auth/step-up/", {"code": totp_code(totp_device(operator))}, format="json")
    second_factor.reset(operator, by=administrator)

    lines = json_log_lines.getvalue()
    assert lines.count("\n") > 5 and all(json.loads(line) for line in lines.splitlines())
    audit = json.dumps([[event.action, event.before, event.after, event.reason, event.object_id]
                        for event in AuditEvent.objects.all()], default=str)
    assert "auth.token_created" in audit and "second_factor" in audit
    for secret in secrets + [PASSWORD]:
        for piece in pieces(secret):
            assert piece not in lines, secret
            assert piece not in audit, secret
