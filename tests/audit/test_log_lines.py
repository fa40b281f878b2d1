"""JSON log lines (LOG_FORMAT=json) that name their request: the request id, user, game, round and
bet, from the web request through the settlement task it enqueues to the audit events it writes."""

import io
import json
import logging
import logging.config

import pytest

from audit import log_lines
from audit.choices import AuditAction
from audit.context import log_context, request_context
from audit.models import AuditEvent
from games.models import Bet
from tests.api.helpers import API

SEED = "9f" * 32  # 64 hex digits, as a server seed


@pytest.fixture
def as_integration(api_as, integration):
    return api_as(integration)


@pytest.fixture
def player(funded_account):
    return funded_account("player-1", "500.00")


@pytest.fixture
def json_lines(settings):
    """Every record the root logger handles from now, as the LOG_FORMAT=json handler writes it, parsed
    (with the request lines LOG_FORMAT=json turns on)."""
    settings.LOG_REQUESTS = True
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(log_lines.ContextFilter())
    handler.setFormatter(log_lines.JsonFormatter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)
    root.setLevel(level)


def test_a_line_is_one_json_object_with_its_context_and_no_hex_secret(json_lines):
    with request_context("req-7", "192.0.2.1"):
        log_context(game=3, round=41, bet=None)
        logging.getLogger("some.module").warning("seed %s leaked?", SEED, extra={"count": 2, "request": object()})
    [line] = json_lines()
    assert line == {"time": line["time"], "level": "WARNING", "logger": "some.module",
                    "message": f"seed {log_lines.REDACTED} leaked?", "request_id": "req-7", "game": 3, "round": 41,
                    "count": 2}
    assert line["time"].endswith("Z") and len(line["time"]) == len("2026-12-02T10:00:00.000Z")


def test_an_exception_is_one_line_too_and_outside_a_request_there_is_no_context(json_lines):
    try:
        raise ValueError(f"bad seed {SEED}")
    except ValueError:
        logging.getLogger("x").exception("failed")
    [line] = json_lines()
    assert set(line) == {"time", "level", "logger", "message", "exception"}
    assert "ValueError: bad seed [hex redacted]" in line["exception"] and SEED not in line["exception"]


@pytest.mark.parametrize("log_format", ["plain", "json"])
def test_the_setting_builds_a_handler_that_adds_the_context(log_format):
    config = log_lines.logging_config(log_format, "INFO")
    assert config["handlers"]["console"]["filters"] == ["context"]
    assert config["handlers"]["console"]["formatter"] == log_format
    with pytest.raises(ValueError, match="LOG_FORMAT"):
        log_lines.logging_config("xml", "INFO")


@pytest.mark.django_db(transaction=True)
def test_a_bet_and_its_settlement_name_the_requests_that_made_them(json_lines, as_integration, integration,
                                                                   game, player):
    opened = as_integration.post(f"{API}/games/{game.slug}/rounds/")
    round_id = opened.json()["id"]
    placed = as_integration.post(f"{API}/rounds/{round_id}/bets/", {
        "account": "player-1", "bet_type": "BANKER", "stake": "10.00", "idempotency_key": "k1"},
        HTTP_X_REQUEST_ID="bet-req-1")
    assert placed.status_code == 201 and placed["X-Request-ID"] == "bet-req-1"
    bet = Bet.objects.get()
    # Tasks run in-process here: the settlement runs, and logs, inside the deal's request.
    dealt = as_integration.post(f"{API}/rounds/{round_id}/deal/", HTTP_X_REQUEST_ID="deal-req-1")
    assert dealt.status_code == 200

    lines = json_lines()
    [bet_line] = [line for line in lines if line.get("request_id") == "bet-req-1"]
    assert bet_line == {**bet_line, "level": "INFO", "logger": "audit.middleware", "user": integration.username,
                        "game": game.pk, "round": round_id, "bet": bet.pk, "method": "POST", "status": 201,
                        "path": f"{API}/rounds/{round_id}/bets/", "message": f"POST {API}/rounds/{round_id}/bets/ 201"}
    [settled] = [line for line in lines if line["logger"] == "settlement.services"]
    assert settled == {**settled, "request_id": "deal-req-1", "user": integration.username, "game": game.pk,
                       "round": round_id, "message": settled["message"]}
    assert settled["message"].startswith("settled 1 round(s), 1 bet(s)")
    event = AuditEvent.objects.get(action=AuditAction.ROUNDS_SETTLED)
    assert event.request_id == "deal-req-1"
    print("a bet:", json.dumps(bet_line), "\nits settlement:", json.dumps(settled))


@pytest.mark.django_db
@pytest.mark.parametrize("given", ["x" * 65, "has space", "quote\"d", ""])
def test_an_unusable_request_id_is_replaced_by_a_fresh_one(as_integration, given):
    response = as_integration.get(f"{API}/games/", HTTP_X_REQUEST_ID=given)
    assert response.status_code == 200
    assert response["X-Request-ID"] != given and len(response["X-Request-ID"]) == 32


@pytest.mark.django_db
def test_request_lines_can_be_switched_off(json_lines, as_integration, settings):
    settings.LOG_REQUESTS = False
    as_integration.get(f"{API}/games/")
    assert not [line for line in json_lines() if line["logger"] == "audit.middleware"]
