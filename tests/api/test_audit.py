"""The audit trail through the API (its head and its events) and where a request's changes come from:
the request id (X-Request-ID) and the source IP land in every event the request causes."""

import base64

import pytest

from audit import heads
from audit.models import AuditEvent
from audit.services import audit_head_sign
from tests.api.helpers import API
from tests.conftest import verified_login

pytestmark = pytest.mark.django_db

HEAD = f"{API}/audit/head/"
EVENTS = f"{API}/audit/events/"


def test_the_head_is_the_latest_signed_head_with_its_public_key(as_support, operator, game):
    empty = as_support.get(HEAD).json()
    assert empty["head"] is None and empty["pending"] == AuditEvent.objects.count() > 0

    head = audit_head_sign()
    body = as_support.get(HEAD).json()
    assert body["head"] == head.as_json() and body["pending"] == 0 and body["tree_size"] == head.tree_size
    assert heads.signature_holds(body["head"], base64.b64decode(body["public_key"]))


def test_events_are_listed_newest_first_and_filtered(as_support, as_operator, game, player, open_round):
    as_operator.post(f"{API}/rounds/{open_round.pk}/void/", {"reason": "Misdeal"})

    everything = as_support.get(EVENTS).json()["results"]
    newest_first = list(AuditEvent.objects.order_by("-id").values_list("pk", flat=True))
    assert [event["id"] for event in everything] == newest_first

    voided = as_support.get(EVENTS, {"action": "round.voided"}).json()["results"]
    assert len(voided) == 1
    event = voided[0]
    assert (event["object_type"], event["object_id"], event["reason"]) == ("round", str(open_round.pk), "Misdeal")
    assert event["actor"] == "olivia-operator" and event["actor_user"] is not None
    assert event["leaf_index"] is None and event["hash"] is None  # pending, and never chained

    of_round = as_support.get(EVENTS, {"object_type": "round", "object_id": str(open_round.pk)}).json()["results"]
    assert {item["action"] for item in of_round} == {"round.opened", "round.voided"}
    assert as_support.get(EVENTS, {"action": "no.such.action"}).json()["results"] == []


def test_events_page_with_a_cursor(as_support, operator, game):
    from wallet import services

    for number in range(7):
        services.account_create(actor=operator, external_id=f"p{number}")
    expected = list(AuditEvent.objects.order_by("-id").values_list("pk", flat=True))

    seen, url = [], f"{EVENTS}?page_size=3"
    while url:
        page = as_support.get(url).json()
        assert len(page["results"]) <= 3
        seen += [event["id"] for event in page["results"]]
        url = page["next"]
    assert seen == expected
    assert "count" not in page


def test_the_filter_is_validated(as_support):
    response = as_support.get(EVENTS, {"object_id": "x" * 65})
    assert response.status_code == 400 and "object_id" in response.json()


@pytest.mark.parametrize("url", [HEAD, EVENTS])
def test_only_roles_with_the_audit_view_permission_read_the_trail(api_as, operator, support, administrator,
                                                                  integration, nobody, url):
    for user in (operator, support, administrator):
        assert api_as(user).get(url).status_code == 200
    for user in (integration, nobody):
        response = api_as(user).get(url)
        assert response.status_code == 403 and "audit.view_auditevent" in response.json()["detail"]
    assert api_as(None).get(url).status_code == 401


@pytest.mark.parametrize("url", [HEAD, EVENTS])
def test_the_trail_is_read_only(as_admin, url):
    before = AuditEvent.objects.count()
    for method in ("post", "put", "patch", "delete"):
        assert getattr(as_admin, method)(url, {}).status_code == 405
    assert AuditEvent.objects.count() == before


# --- Request id and source IP ------------------------------------------------------------------------

def test_an_api_change_records_the_request_id_and_source_ip(as_operator, game):
    response = as_operator.patch(f"{API}/games/main-table/", {"tie_multiplier": "8.5", "reason": "promo"},
                                 HTTP_X_REQUEST_ID="req-4f2a-0001", REMOTE_ADDR="203.0.113.7")

    assert response.status_code == 200
    assert response["X-Request-ID"] == "req-4f2a-0001"
    event = AuditEvent.objects.get(action="game.configured")
    assert event.reason == "promo"
    assert (event.request_id, event.source_ip) == ("req-4f2a-0001", "203.0.113.7")
    # And the API lists it under that request id.
    listed = as_operator.get(EVENTS, {"request_id": "req-4f2a-0001"}).json()["results"]
    assert [item["id"] for item in listed] == [event.pk]
    assert listed[0]["source_ip"] == "203.0.113.7"


def test_every_event_of_one_request_shares_its_id(as_operator, integration, api_as, open_round, player):
    game_server = api_as(integration)
    game_server.post(f"{API}/rounds/{open_round.pk}/bets/",
                     {"account": "player-1", "bet_type": "TIE", "stake": "1.00", "idempotency_key": "k1"})

    as_operator.post(f"{API}/rounds/{open_round.pk}/void/", {"reason": "Table closed"},
                     HTTP_X_REQUEST_ID="void-77", REMOTE_ADDR="2001:db8::5")

    events = list(AuditEvent.objects.filter(request_id="void-77"))
    assert {event.action for event in events} == {"round.voided", "bet.refunded"}
    assert {event.source_ip for event in events} == {"2001:db8::5"}


def test_a_malformed_request_id_is_replaced_by_a_fresh_one(as_operator, game):
    response = as_operator.patch(f"{API}/games/main-table/", {"tie_multiplier": "8.5", "reason": "promo"},
                                 HTTP_X_REQUEST_ID="bad id; DROP TABLE", REMOTE_ADDR="198.51.100.2")

    event = AuditEvent.objects.order_by("-id").first()
    assert event.request_id != "bad id; DROP TABLE"
    assert len(event.request_id) == 32 and event.request_id == response["X-Request-ID"]
    assert event.source_ip == "198.51.100.2"


def test_an_admin_change_records_the_request_id_and_source_ip(operator, game):
    from django.test import Client

    from tests.admin.helpers import admin_url, change_form

    client = Client(HTTP_X_REQUEST_ID="admin-req-9", REMOTE_ADDR="192.0.2.44")
    verified_login(client, operator)

    response = client.post(admin_url(game, "change"), change_form(game, tie_multiplier="8.5", reason="weekend"))

    assert response.status_code == 302
    events = list(AuditEvent.objects.filter(request_id="admin-req-9"))
    assert events and all(event.source_ip == "192.0.2.44" for event in events)
    assert any(event.reason == "weekend" and event.actor_user == operator for event in events)
