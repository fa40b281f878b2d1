"""POST /api/v1/bets/{id}/settle-held/: an operator's way out for a held bet, with the role checks."""

import pytest

from audit.models import AuditEvent
from games.choices import BetStatus
from games.models import Bet
from tests.settlement.faults import MESSAGE, held_round  # noqa: F401
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry

# On PostgreSQL the fault is a trigger on the accounts table, which only the tables' owner may create.
pytestmark = [pytest.mark.django_db, pytest.mark.owner]


def url(bet_id) -> str:
    return f"/api/v1/bets/{bet_id}/settle-held/"


def test_an_operator_settles_a_held_bet_once(api_as, operator, held_round):  # noqa: F811
    client = api_as(operator)
    bet = Bet.objects.filter(status=BetStatus.HELD).order_by("pk").first()
    shown = client.get(f"/api/v1/bets/{bet.pk}/").json()
    assert shown["status"] == "HELD" and MESSAGE in shown["hold_reason"] and shown["held_at"]
    assert client.get("/api/v1/bets/", {"status": "HELD"}).json()["results"][-1]["id"] == bet.pk
    assert client.get("/api/v1/settlement/queue/").json()["held_bets"] >= 1

    # The fault is still there: the bet stays held and the 409 names the reason.
    response = client.post(url(bet.pk), {"reason": "retry"}, format="json")
    assert response.status_code == 409
    assert MESSAGE in response.json()["status"][0]
    assert Bet.objects.get(pk=bet.pk).status == BetStatus.HELD

    held_round["fault"].remove()
    response = client.post(url(bet.pk), {"reason": "the account was unfrozen"}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] in ("WON", "PUSH") and body["payout"] and MESSAGE in body["hold_reason"]
    assert LedgerEntry.objects.filter(bet_id=bet.pk, kind=LedgerKind.PAYOUT).count() == 1
    event = AuditEvent.objects.get(action="settlement.held_bet_settled")
    assert event.actor == operator.username and event.reason == "the account was unfrozen"

    again = client.post(url(bet.pk), {"reason": "again"}, format="json")
    assert again.status_code == 409 and "not held" in again.json()["status"][0]
    assert LedgerEntry.objects.filter(bet_id=bet.pk, kind=LedgerKind.PAYOUT).count() == 1


@pytest.mark.parametrize("body", [{}, {"reason": ""}, {"reason": "   "}, {"reason": 5}, {"reason": "x", "extra": 1}])
def test_a_reason_is_required_and_nothing_is_written_without_one(api_as, operator, held_round, body):  # noqa: F811
    held_round["fault"].remove()
    bet = Bet.objects.filter(status=BetStatus.HELD).first()
    response = api_as(operator).post(url(bet.pk), body, format="json")
    assert response.status_code == 400
    assert set(response.json()) <= {"reason", "extra"} and response.json()
    assert Bet.objects.get(pk=bet.pk).status == BetStatus.HELD


@pytest.mark.parametrize("role,status", [("support", 403), ("integration", 403), ("nobody", 403), (None, 401)])
def test_only_operators_settle_held_bets(request, api_as, role, status, held_round):  # noqa: F811
    held_round["fault"].remove()
    bet = Bet.objects.filter(status=BetStatus.HELD).first()
    client = api_as(request.getfixturevalue(role) if role else None)
    assert client.post(url(bet.pk), {"reason": "mine"}, format="json").status_code == status
    assert Bet.objects.get(pk=bet.pk).status == BetStatus.HELD


def test_administrators_may_and_unknown_bets_are_404(api_as, administrator, held_round):  # noqa: F811
    held_round["fault"].remove()
    client = api_as(administrator)
    assert client.post(url(987654), {"reason": "x"}, format="json").status_code == 404
    bet = Bet.objects.filter(status=BetStatus.HELD).first()
    assert client.post(url(bet.pk), {"reason": "fixed"}, format="json").status_code == 200
