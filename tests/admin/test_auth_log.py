"""The authentication log in the admin (Audit trail → Authentication events): administrators and
regulators read it, filter it and export it as CSV; support and operators do not."""

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from apitokens.models import ApiToken
from apitokens.services import token_create
from audit.models import AuditEvent, AuthEvent
from tests.admin.helpers import admin_url
from tests.api.helpers import API

pytestmark = pytest.mark.django_db

AGENT = "curl/8.5.0"


@pytest.fixture
def recorded(operator, support):
    """A success, two wrong passwords, a refused token and a token made (and its key)."""
    client = Client(REMOTE_ADDR="198.51.100.24", HTTP_USER_AGENT=AGENT)
    client.post("/admin/login/", {"username": "olivia-operator", "password": "correct-horse-battery"})
    for username in ("olivia-operator", "sam-support"):
        Client(REMOTE_ADDR="198.51.100.25").post("/admin/login/", {"username": username, "password": "guess-123"})
    APIClient(REMOTE_ADDR="203.0.113.9").get(f"{API}/games/", HTTP_AUTHORIZATION="Token " + "ab" * 20)
    return token_create(owner=support, actor="system:tests")[1]


# The readers' own log-ins (the test client's force_login) are in the log too: left out here.
READERS = ("ada-admin", "rita-regulator")


def listed(client, **query) -> list[AuditEvent]:
    response = client.get(admin_url(AuthEvent), query)
    assert response.status_code == 200, response.status_code
    return [event for event in response.context["cl"].result_list if event.username not in READERS]


def test_administrators_and_regulators_list_it(as_admin, as_regulator, recorded):
    for client in (as_admin, as_regulator):
        events = listed(client)
        assert [(event.action, event.outcome) for event in events] == [
            ("auth.token_created", "token_created"), ("auth.token_refused", "unknown_token"),
            ("auth.login_failed", "wrong_password"), ("auth.login_failed", "wrong_password"),
            ("auth.logged_in", "succeeded")]
        page = client.get(admin_url(AuthEvent)).content.decode()
        assert AGENT in page and "198.51.100.24" in page and "90 days" in page


def test_support_and_operators_do_not(as_support, as_operator, recorded):
    for client in (as_support, as_operator):
        assert client.get(admin_url(AuthEvent)).status_code == 403
        assert client.get(admin_url(AuthEvent, "export")).status_code == 403


def test_filters_and_search(as_admin, recorded):
    assert [event.after["username"] for event in listed(as_admin, outcome="wrong_password")] == [
        "sam-support", "olivia-operator"]
    assert [event.action for event in listed(as_admin, action="auth.token_refused")] == ["auth.token_refused"]
    assert {event.after["username"] for event in listed(as_admin, q="sam-support")} == {"sam-support"}


def test_an_event_s_page(as_admin, recorded):
    event = AuditEvent.objects.get(action="auth.logged_in", object_id="olivia-operator")
    page = as_admin.get(admin_url(AuthEvent, "change", event.pk))
    assert page.status_code == 200 and AGENT in page.content.decode()


def test_the_csv_export_holds_the_filtered_rows_and_no_secret(as_admin, recorded):
    response = as_admin.get(admin_url(AuthEvent, "export"), {"outcome": "wrong_password"})
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    text = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(row["action"], row["outcome"], row["username"], row["source_ip"]) for row in rows] == [
        ("auth.login_failed", "wrong_password", "sam-support", "198.51.100.25"),
        ("auth.login_failed", "wrong_password", "olivia-operator", "198.51.100.25")]
    everything = b"".join(as_admin.get(admin_url(AuthEvent, "export")).streaming_content).decode()
    assert len([row for row in csv.DictReader(io.StringIO(everything)) if row["username"] not in READERS]) == 5
    assert AGENT in everything
    for secret in ("guess-123", "correct-horse-battery", "ab" * 20, recorded, recorded[:16]):
        assert secret not in everything and secret not in repr(list(AuditEvent.objects.values()))


def test_a_token_made_and_revoked_in_the_admin_is_recorded_never_the_token(as_admin, administrator, support):
    made = as_admin.post(reverse("admin:apitokens_apitoken_add"), {"owner": support.pk, "scopes": ["read"]},
                         REMOTE_ADDR="192.0.2.5", HTTP_USER_AGENT=AGENT)
    assert made.status_code == 200, made.content
    token = ApiToken.objects.get(owner=support)
    [key] = [word for word in made.content.decode().replace("<", " ").replace(">", " ").split()
             if word.startswith(token.prefix)]
    revoked = as_admin.post(reverse("admin:apitokens_apitoken_changelist"),
                            {"action": "revoke", "_selected_action": [token.pk]})
    assert revoked.status_code == 302 and not ApiToken.objects.get(pk=token.pk).enabled
    events = AuditEvent.objects.filter(action__in=["auth.token_created", "auth.token_revoked"]).order_by("id")
    assert [(event.action, event.actor_user, event.after["username"]) for event in events] == [
        ("auth.token_created", administrator, "sam-support"), ("auth.token_revoked", administrator, "sam-support")]
    assert (events[0].source_ip, events[0].after["user_agent"]) == ("192.0.2.5", AGENT)
    everything = repr(list(AuditEvent.objects.values()))
    assert key not in everything and token.prefix not in everything
