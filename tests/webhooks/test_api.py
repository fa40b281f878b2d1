"""Integration clients register their webhook endpoints through the API and see only their own."""

import pytest

from audit.models import AuditEvent
from backoffice.roles import Role
from tests.conftest import make_user
from webhooks.models import Endpoint

pytestmark = pytest.mark.django_db
URL = "/api/v1/webhooks/endpoints/"


def test_register_rotate_and_list(api_as, integration):
    client = api_as(integration)
    response = client.post(URL, {"reason": "new receiver",
                                 "url": "https://hooks.example/baccarat", "events": ["round.settled", "bet.settled"]})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["secret"].startswith("whsec_") and body["events"] == ["round.settled", "bet.settled"]
    rotated = client.post(f"{URL}{body['id']}/rotate-secret/")
    assert rotated.status_code == 200 and rotated.json()["secret"] != body["secret"]
    listed = client.get(URL).json()["results"]
    assert [item["id"] for item in listed] == [body["id"]] and "secret" not in listed[0]
    assert client.get(f"{URL}{body['id']}/deliveries/").json()["results"] == []
    paused = client.patch(f"{URL}{body['id']}/", {"active": False})
    assert paused.status_code == 200 and not Endpoint.objects.get().active
    assert {"webhook.endpoint_created", "webhook.secret_rotated", "webhook.endpoint_changed"} <= set(
        AuditEvent.objects.values_list("action", flat=True))


@pytest.mark.parametrize("body,field", [
    ({"url": "ftp://hooks.example/x", "events": ["round.settled"]}, "url"),
    ({"url": "not a url", "events": ["round.settled"]}, "url"),
    ({"url": "https://hooks.example/x", "events": []}, "events"),
    ({"url": "https://hooks.example/x", "events": ["round.exploded"]}, "events"),
    ({"url": "https://hooks.example/x", "events": ["round.settled"], "secret": "mine"}, "secret"),
])
def test_bad_input_names_the_field_and_writes_nothing(api_as, integration, body, field):
    response = api_as(integration).post(URL, body)
    assert response.status_code == 400 and field in response.json(), response.content
    assert not Endpoint.objects.exists()


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_registering_asks_for_a_reason_and_audits_it(api_as, integration, reason):
    body = {"url": "https://hooks.example/x", "events": ["round.settled"]}
    response = api_as(integration).post(URL, body if reason is None else {**body, "reason": reason}, format="json")
    assert response.status_code == 400 and "reason" in response.json(), response.content
    assert not Endpoint.objects.exists()
    assert api_as(integration).post(URL, {**body, "reason": "Staging receiver"}).status_code == 201
    assert AuditEvent.objects.get(action="webhook.endpoint_created").reason == "Staging receiver"


def test_another_client_sees_none_of_them(api_as, integration):
    endpoint_id = api_as(integration).post(URL, {"reason": "new receiver",
                                                 "url": "https://a.example/", "events": ["round.voided"]}).json()["id"]
    other = api_as(make_user("other-server", Role.INTEGRATION))
    assert other.get(URL).json()["results"] == []
    assert other.get(f"{URL}{endpoint_id}/").status_code == 404
    assert other.post(f"{URL}{endpoint_id}/rotate-secret/").status_code == 404


def test_support_cannot_register(api_as, support):
    assert api_as(support).post(URL, {"reason": "new receiver",
                                      "url": "https://a.example/", "events": ["round.voided"]}).status_code == 403


def test_an_event_named_twice_is_subscribed_once(api_as, integration):
    response = api_as(integration).post(URL, {"reason": "new receiver", "url": "https://hooks.example/x",
                                              "events": ["round.settled", "round.voided", "round.settled"]})
    assert response.status_code == 201 and response.json()["events"] == ["round.settled", "round.voided"]
