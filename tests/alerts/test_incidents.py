"""Incidents: opened by a critical alert, joined by the critical alerts that open while it is open,
restored when its last alert is resolved (by a person, or by the system once the check no longer finds
the condition); in the audit trail, the admin (list, CSV) and the API."""

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse

from alerts import checks, readiness, services
from alerts.checks import Finding
from alerts.choices import AlertKind
from alerts.models import Alert, Incident
from audit.models import AuditEvent
from settlement.services import settlement_sweep
from tests.api.helpers import API
from tests.conftest import verified_login

pytestmark = pytest.mark.django_db


def critical(kind="held_bets", key="settlement", message="2 bet(s) held."):
    return Finding(kind, key, "critical", message, recurring=True)


def test_a_critical_alert_opens_an_incident_and_the_next_ones_join_it():
    first, _ = services.alert_raise(critical())
    second, _ = services.alert_raise(critical("audit_pending", "sequencer", "5 audit event(s) wait."))
    payout, _ = services.alert_raise(Finding("large_payout", "bet:1", "warning", "Bet 1 paid a lot."))
    incident = Incident.objects.get()
    assert (incident.status, incident.cause) == ("open", "Bets held for operators: 2 bet(s) held.")
    assert list(incident.alerts.order_by("pk")) == [first, second] and payout.incident is None
    opened = AuditEvent.objects.get(action="incident.opened")
    assert (opened.object_id, opened.actor, opened.after) == (
        str(incident.pk), "system:alerts", {"cause": incident.cause, "alert": first.pk})
    assert AuditEvent.objects.get(action="alert.opened", object_id=str(second.pk)).after["incident"] == incident.pk


def test_the_service_is_restored_when_a_person_resolves_the_last_alert(operator):
    first, _ = services.alert_raise(critical())
    second, _ = services.alert_raise(critical("readiness", "workers", "Not ready: the cache is not reachable."))
    services.alert_resolve(alert_id=first.pk, actor=operator, note="paid by hand")
    incident = Incident.objects.get()
    assert incident.status == "open" and not AuditEvent.objects.filter(action="incident.restored").exists()
    services.alert_resolve(alert_id=second.pk, actor=operator, note="redis restarted")
    incident.refresh_from_db()
    second.refresh_from_db()
    assert (incident.status, incident.restored_by, incident.restored_by_actor) == (
        "restored", operator, operator.username)
    assert incident.restored_at == second.resolved_at
    restored = AuditEvent.objects.get(action="incident.restored")
    assert (restored.actor, restored.after) == (operator.username, {
        "status": "restored", "restored_by": operator.username, "alerts": [first.pk, second.pk]})
    # The condition back: a new alert, a new incident.
    services.alert_raise(critical())
    assert Incident.objects.filter(status="open").count() == 1 and Incident.objects.count() == 2


def test_the_system_restores_the_service_once_the_check_no_longer_finds_the_condition(dealt_long_ago):
    dealt_long_ago(minutes=10)
    assert services.alerts_check(["settlement_lag"]) == {"settlement_lag": (1, 1)}
    alert = Alert.objects.get()
    assert (alert.severity, alert.incident.status) == ("critical", "open")
    settlement_sweep()  # the workers caught up
    services.alerts_check(["settlement_lag"])
    alert.refresh_from_db()
    assert (alert.status, alert.resolved_by, alert.resolve_note) == ("resolved", None, services.CLEARED_NOTE)
    incident = Incident.objects.get()
    assert (incident.status, incident.restored_by, incident.restored_by_actor) == ("restored", None, "system:alerts")
    assert AuditEvent.objects.get(action="incident.restored").actor == "system:alerts"


def test_a_check_that_still_finds_its_condition_resolves_nothing(dealt_long_ago):
    dealt_long_ago(minutes=10)
    services.alerts_check(["settlement_lag"])
    services.alerts_check(["settlement_lag"])
    assert Alert.objects.get().status == "open" and Incident.objects.get().status == "open"


def test_readiness_failing_is_a_critical_alert(monkeypatch):
    assert checks.readiness() == []  # the test database is migrated, the cache answers, tasks run in-process
    monkeypatch.setitem(readiness.PROBES, "broker", lambda: "the broker is not reachable (OperationalError)")
    assert services.alerts_check(["readiness"]) == {"readiness": (1, 1)}
    alert = Alert.objects.get()
    assert (alert.kind, alert.severity, alert.incident.status) == (AlertKind.READINESS, "critical", "open")
    assert "broker is not reachable" in alert.message
    monkeypatch.undo()
    services.alerts_check(["readiness"])
    assert Incident.objects.get().status == "restored"


def test_the_api_lists_and_shows_incidents(api_as, support, integration, operator):
    first, _ = services.alert_raise(critical())
    services.alert_resolve(alert_id=first.pk, actor=operator, note="done")
    services.alert_raise(critical("audit_pending", "sequencer", "5 audit event(s) wait."))
    client = api_as(support)
    listed = client.get(f"{API}/incidents/").json()["results"]
    assert [(item["status"], item["restored_by"]) for item in listed] == [("open", ""), ("restored", operator.username)]
    restored = listed[1]
    assert restored["alerts"] == [{"id": first.pk, "kind": "held_bets", "key": "settlement", "severity": "critical",
                                   "status": "resolved", "message": "2 bet(s) held.",
                                   "first_seen": restored["alerts"][0]["first_seen"],
                                   "resolved_at": restored["alerts"][0]["resolved_at"]}]
    assert [item["id"] for item in client.get(f"{API}/incidents/?status=open").json()["results"]] == [listed[0]["id"]]
    assert client.get(f"{API}/incidents/{restored['id']}/").json() == restored
    assert client.get(f"{API}/incidents/999999/").status_code == 404
    refused = client.get(f"{API}/incidents/?status=closed")
    assert refused.status_code == 400 and "status" in refused.json()
    assert api_as(integration).get(f"{API}/incidents/").status_code == 403


def test_the_admin_lists_shows_and_exports_incidents(operator):
    alert, _ = services.alert_raise(critical())
    services.alert_resolve(alert_id=alert.pk, actor=operator, note="done")
    incident = Incident.objects.get()
    client = verified_login(Client(), operator)
    listed = client.get(reverse("admin:alerts_incident_changelist"))
    assert listed.status_code == 200 and "Bets held for operators: 2 bet(s) held." in listed.content.decode()
    page = client.get(reverse("admin:alerts_incident_change", args=[incident.pk])).content.decode()
    assert reverse("admin:alerts_alert_change", args=[alert.pk]) in page
    exported = client.get(reverse("admin:alerts_incident_export"))
    rows = list(csv.reader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert rows[0] == ["incident_id", "opened_at", "cause", "status", "restored_at", "restored_by",
                       "duration_seconds", "alerts"]
    assert rows[1][0] == str(incident.pk) and rows[1][3:6:2] == ["restored", operator.username]
    assert rows[1][7] == f"{alert.pk}:held_bets"
