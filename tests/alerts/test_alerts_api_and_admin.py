"""Alerts in the API and the admin: acknowledged and resolved with a note; on top of the dashboard."""

import pytest
from django.test import Client

from alerts import services
from alerts.checks import Finding
from alerts.models import Alert
from audit.models import AuditEvent
from tests.conftest import verified_login

pytestmark = pytest.mark.django_db
API = "/api/v1"


@pytest.fixture
def alert(db):
    alert, opened = services.alert_raise(Finding("large_payout", "bet:1", "warning", "Bet 1 paid 99,000.00 USD."))
    assert opened
    return alert


def test_operators_acknowledge_then_resolve_with_a_note(api_as, operator, alert):
    client = api_as(operator)
    assert [a["id"] for a in client.get(f"{API}/alerts/", {"status": "open"}).json()["results"]] == [alert.pk]
    acknowledged = client.post(f"{API}/alerts/{alert.pk}/acknowledge/", {"note": "looking at it"})
    assert acknowledged.status_code == 200 and acknowledged.json()["status"] == "acknowledged"
    assert acknowledged.json()["acknowledged_by"] == operator.username
    assert client.post(f"{API}/alerts/{alert.pk}/acknowledge/", {"note": "again"}).status_code == 409
    resolved = client.post(f"{API}/alerts/{alert.pk}/resolve/", {"note": "verified"}).json()
    assert resolved["status"] == "resolved" and resolved["resolve_note"] == "verified"
    assert client.post(f"{API}/alerts/{alert.pk}/resolve/", {"note": "again"}).status_code == 409
    assert list(AuditEvent.objects.filter(object_type="alert").values_list("action", "reason").order_by("id")) == [
        ("alert.opened", ""), ("alert.acknowledged", "looking at it"), ("alert.resolved", "verified")]


@pytest.mark.parametrize("body", [{}, {"note": ""}, {"note": "   "}])
def test_a_note_is_required(api_as, operator, alert, body):
    response = api_as(operator).post(f"{API}/alerts/{alert.pk}/resolve/", body)
    assert response.status_code == 400 and "note" in response.json()
    assert Alert.objects.get().status == "open"


def test_support_sees_alerts_but_does_not_handle_them(api_as, support, alert):
    client = api_as(support)
    assert client.get(f"{API}/alerts/").status_code == 200
    assert client.post(f"{API}/alerts/{alert.pk}/resolve/", {"note": "x"}).status_code == 403
    assert client.get(f"{API}/alerts/", {"status": "closed"}).status_code == 400


def test_open_alerts_are_on_top_of_the_dashboard(operator, alert):
    client = Client()
    verified_login(client, operator)
    page = client.get("/admin/dashboard/").content.decode()
    assert 'id="open-alerts"' in page and "Bet 1 paid 99,000.00 USD." in page
    assert page.index('id="open-alerts"') < page.index('id="dashboard-filters"')


def test_the_admin_acknowledges_and_resolves_with_a_note(operator, alert):
    client = Client()
    verified_login(client, operator)
    page = client.get(f"/admin/alerts/alert/{alert.pk}/change/").content.decode()
    assert f"/admin/alerts/alert/{alert.pk}/acknowledge/" in page
    assert client.post(f"/admin/alerts/alert/{alert.pk}/acknowledge/", {"note": ""}).status_code == 200  # asks again
    client.post(f"/admin/alerts/alert/{alert.pk}/acknowledge/", {"note": "on it"})
    client.post(f"/admin/alerts/alert/{alert.pk}/resolve/", {"note": "fixed"})
    alert.refresh_from_db()
    assert (alert.status, alert.acknowledge_note, alert.resolve_note) == ("resolved", "on it", "fixed")
    assert "Bet 1 paid" not in client.get("/admin/alerts/alert/").content.decode()  # the list shows unresolved
    assert "Bet 1 paid" in client.get("/admin/alerts/alert/", {"status": "any"}).content.decode()
