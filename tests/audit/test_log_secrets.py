"""No secret in any log line: every line a full scenario writes with LOG_FORMAT=json and LOG_LEVEL=DEBUG
(SQL logging asked for, as DEBUG asks) is read for each secret the scenario handled: the server
seeds not yet revealed, API tokens (good and refused), passwords (right and wrong), second-factor
codes and keys, session keys. Hex secrets are looked for whole and by any 16-character piece."""

import io
import json
import logging
import logging.config
import re

import pytest
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client

from audit import log_lines
from games.models import SeedPair
from tests.api.helpers import API
from tests.conftest import api_client_for, totp_code, totp_device, verified_login

pytestmark = pytest.mark.django_db(transaction=True)
PIECE = 16
PASSWORD = "correct-horse-battery"  # every test user's (tests/conftest.py)
WRONG_PASSWORD = "Wrong-but-secret-Pw-9931"
REFUSED_TOKEN = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def every_line(settings):
    """The LOGGING of LOG_FORMAT=json at LOG_LEVEL=DEBUG, its console writing here; every logger's
    level lowered to DEBUG as that config leaves it, and the SQL of every statement asked for (as
    DEBUG asks). Put back as it was after."""
    settings.LOG_REQUESTS = True  # as with LOG_FORMAT=json
    stream = io.StringIO()
    config = log_lines.logging_config("json", "DEBUG")
    config["handlers"]["console"]["stream"] = stream
    logging.config.dictConfig(config)
    connection.force_debug_cursor = True
    yield stream
    connection.force_debug_cursor = False
    logging.config.dictConfig(settings.LOGGING)


def scenario(game, operator, integration, administrator, funded_account) -> dict:
    """Log-ins to the admin (a wrong password, then the right one), bets, deals and their settlement, seed
    rotations, a refused token, through HTTP as clients send them; the secrets it used."""
    funded_account("player-1", "500.00")
    device = totp_device(administrator)
    admin = Client()
    assert admin.post("/admin/login/", {"username": administrator.username, "password": WRONG_PASSWORD}
                      ).status_code == 200
    # The password through the log-in page; the second factor stamped on the session as a right code
    # leaves it (tests/conftest.py): the code page's own log lines are not part of this scenario yet.
    verified_login(admin, administrator, password=PASSWORD)
    code = totp_code(device)
    assert admin.get("/admin/games/seedpair/").status_code == 200
    server, staff = api_client_for(integration), api_client_for(operator)
    for _ in range(2):
        round_id = server.post(f"{API}/games/{game.slug}/rounds/").json()["id"]
        for key, bet_type in enumerate(("PLAYER", "BANKER", "TIE")):
            assert server.post(f"{API}/rounds/{round_id}/bets/", {
                "account": "player-1", "bet_type": bet_type, "stake": "2.00", "idempotency_key": f"{round_id}-{key}",
            }).status_code == 201
        assert server.post(f"{API}/rounds/{round_id}/deal/").status_code == 200
        assert staff.post(f"{API}/games/{game.slug}/seeds/rotate/", {"reason": "rotation"}).status_code in (200, 202)
    assert staff.get(f"{API}/games/{game.slug}/seeds/").status_code == 200
    refused = Client(HTTP_AUTHORIZATION=f"Token {REFUSED_TOKEN}")
    assert refused.get(f"{API}/games/").status_code == 401
    return {"tokens": [server.api_token_secret, staff.api_token_secret, REFUSED_TOKEN], "codes": [code],
            "device_key": device.key}


def test_no_secret_in_any_log_line_of_a_full_scenario(every_line, game, operator, integration, administrator,
                                                      funded_account):
    used = scenario(game, operator, integration, administrator, funded_account)
    text = every_line.getvalue()
    lines = [json.loads(line) for line in text.splitlines()]  # each line is one JSON object

    unrevealed = list(SeedPair.objects.filter(revealed_at__isnull=True).values_list("server_seed", flat=True))
    revealed = list(SeedPair.objects.filter(revealed_at__isnull=False).values_list("server_seed", flat=True))
    assert unrevealed and revealed
    long_secrets = [*unrevealed, *used["tokens"], used["device_key"]]
    pieces = {secret[i:i + PIECE].lower() for secret in long_secrets for i in range(len(secret) - PIECE + 1)}
    lowered = text.lower()
    leaks = sorted(piece for piece in pieces if piece in lowered)
    sessions = list(Session.objects.values_list("session_key", flat=True))
    assert sessions
    leaks += [word for word in (PASSWORD, WRONG_PASSWORD, *sessions) if word in text]
    leaks += [code for code in used["codes"] if re.search(rf"(?<![0-9]){code}(?![0-9])", text)]
    assert not leaks, f"secrets in the log: {leaks[:5]}"

    # The scan saw every step: the requests, each with its user, the settlements, the refused token;
    # and no statement's SQL, which carries seeds, tokens and session keys as parameters.
    requests = [line for line in lines if line["logger"] == "audit.middleware"]
    assert {line.get("user") for line in requests} >= {administrator.username, operator.username,
                                                       integration.username}
    assert len([line for line in lines if line["logger"] == "settlement.services"]) == 2
    assert any(line["logger"] == "django.request" and line.get("status_code") == 401 for line in lines)
    assert not [line for line in lines if line["logger"] == "django.db.backends"]
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
