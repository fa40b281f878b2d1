"""/api/v1/settlement/: the queue, batches, and a sweep on request, with the role checks."""

import pytest

from audit.models import AuditEvent
from games import services as game_services
from games.choices import RoundStatus
from games.models import Round

pytestmark = pytest.mark.django_db


@pytest.fixture
def backlog(game, integration, funded_account):
    funded_account("p1", "100.00")
    rounds = []
    for i in range(3):
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        game_services.bet_place(round_id=round_.pk, account_external_id="p1", bet_type="BANKER", stake="1.00",
                                idempotency_key=f"k{i}", client=integration)
        rounds.append(game_services.round_deal(round_id=round_.pk, actor=integration))
    return rounds


def test_operator_requests_a_sweep_and_the_queue_empties(api_as, operator, backlog,
                                                         django_capture_on_commit_callbacks):
    client = api_as(operator)
    queue = client.get("/api/v1/settlement/queue/").json()
    assert queue["waiting_rounds"] == 3 and queue["oldest_age_seconds"] >= 0
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/settlement/sweep/")
    assert response.status_code == 202, response.json()
    assert not Round.objects.filter(status=RoundStatus.DEALT).exists()
    assert AuditEvent.objects.filter(action="settlement.sweep_requested", actor=operator.username).exists()
    batches = client.get("/api/v1/settlement/batches/").json()["results"]
    assert len(batches) == 1 and batches[0]["rounds"] == 3 and batches[0]["outcome"] == "ok"
    assert batches[0]["round_ids"] == sorted(r.pk for r in backlog)
    assert client.get("/api/v1/settlement/batches/?outcome=failed").json()["results"] == []
    assert client.get("/api/v1/settlement/batches/?outcome=bogus").status_code == 400


@pytest.mark.parametrize("role,queue,sweep", [
    ("operator", 200, 202), ("administrator", 200, 202), ("support", 200, 403),
    ("integration", 403, 403), ("nobody", 403, 403), (None, 401, 401),
])
def test_role_matrix(request, api_as, role, queue, sweep):
    client = api_as(request.getfixturevalue(role) if role else None)
    assert client.get("/api/v1/settlement/queue/").status_code == queue
    assert client.get("/api/v1/settlement/batches/").status_code == queue
    assert client.post("/api/v1/settlement/sweep/").status_code == sweep
