"""The request id of the request that dealt a round travels with its settlement task (a message
header) into a real worker: its JSON log lines and the audit event it writes name the request."""

import json

import pytest

from audit.choices import AuditAction
from audit.models import AuditEvent
from settlement.models import SettlementBatch
from tests.api.helpers import API
from tests.settlement.workers import wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_the_deals_request_id_reaches_the_workers_lines_and_events(workers, api_as, integration, game,
                                                                   funded_account):
    funded_account("player-1", "500.00")
    client = api_as(integration)
    round_id = client.post(f"{API}/games/{game.slug}/rounds/").json()["id"]
    client.post(f"{API}/rounds/{round_id}/bets/", {"account": "player-1", "bet_type": "PLAYER", "stake": "5.00",
                                                   "idempotency_key": "k1"})
    [worker] = workers.start(1, LOG_FORMAT="json")
    assert client.post(f"{API}/rounds/{round_id}/deal/", HTTP_X_REQUEST_ID="deal-4711").status_code == 200
    wait_for(lambda: SettlementBatch.objects.filter(round_ids=[round_id]).exists() and "succeeded" in worker.log(),
             30, f"the worker to settle round {round_id}:\n{workers.logs_tail()}")

    lines = [json.loads(line) for line in worker.log().splitlines() if line.strip()]  # every line is JSON
    assert {"time", "level", "logger", "message"} <= set().union(*lines)
    assert any(line["message"].endswith(" ready.") for line in lines)
    [settled] = [line for line in lines if line["logger"] == "settlement.services"]
    assert settled == {**settled, "request_id": "deal-4711", "user": integration.username, "game": game.pk,
                       "round": round_id}
    [succeeded] = [line for line in lines if "settlement.settle_rounds" in line["message"]
                   and "succeeded" in line["message"]]
    assert succeeded["request_id"] == "deal-4711"
    assert AuditEvent.objects.get(action=AuditAction.ROUNDS_SETTLED).request_id == "deal-4711"
    print("a JSON line of the settlement:", json.dumps(settled))
