"""A deactivated integration client is sent nothing: its endpoints are disabled and their pending
deliveries cancelled (audited), whichever way it was deactivated; reactivating it resumes nothing."""

import pytest
from django.contrib.auth.models import Group, User
from django.db import transaction

from audit.models import AuditEvent
from backoffice.roles import Role
from core.errors import ApplicationError, Conflict
from games import services as game_services
from tests.admin.conftest import client_for
from tests.admin.helpers import admin_url
from tests.races import held_open
from webhooks import services
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db


def pending_delivery(hook) -> Delivery:
    """A recorded delivery not yet handed to a worker (its transaction's on-commit never runs here)."""
    with transaction.atomic():
        assert services.events_record("round.voided", [{"round": 1}]) == 1
    return Delivery.objects.get(endpoint=hook, status="pending")


def void_a_round(game, integration, operator, capture):
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    with capture(execute=True):
        game_services.round_void(round_id=round_.pk, actor=operator, reason="misdeal")


def test_deactivating_the_client_disables_its_endpoints_and_cancels_their_deliveries(
        receiver, endpoint, game, integration, operator, django_capture_on_commit_callbacks):
    hook, _secret = endpoint(["round.voided", "round.settled"])
    delivery = pending_delivery(hook)
    integration.is_active = False
    integration.save()
    hook.refresh_from_db()
    delivery.refresh_from_db()
    assert not hook.active
    assert (delivery.status, delivery.last_error) == ("cancelled", services.CANCELLED)
    event = AuditEvent.objects.get(action="webhook.endpoint_changed", object_id=str(hook.pk))
    assert (event.before, event.after) == ({"active": True}, {"active": False, "cancelled_deliveries": 1})
    assert "game-server deactivated" in event.reason
    assert services.delivery_attempt(delivery.pk) is None  # never posted
    void_a_round(game, integration, operator, django_capture_on_commit_callbacks)
    assert receiver.requests == [] and Delivery.objects.count() == 1

    integration.is_active = True  # reactivated: nothing resumes by itself
    integration.save()
    hook.refresh_from_db()
    assert not hook.active and Delivery.objects.get().status == "cancelled"
    void_a_round(game, integration, operator, django_capture_on_commit_callbacks)
    assert receiver.requests == [] and Delivery.objects.count() == 1


def test_deactivating_the_client_in_the_admin_disables_its_endpoints(endpoint, integration, administrator):
    hook, _secret = endpoint(["round.voided"])
    delivery = pending_delivery(hook)
    form = {"username": integration.username, "first_name": "", "last_name": "", "email": "",
            "groups": [Group.objects.get(name=Role.INTEGRATION.group_name).pk],
            "date_joined_0": integration.date_joined.strftime("%Y-%m-%d"),
            "date_joined_1": integration.date_joined.strftime("%H:%M:%S"), "last_login_0": "", "last_login_1": ""}
    response = client_for(administrator).post(admin_url(integration, "change"), form)  # is_active unticked
    assert response.status_code == 302, response.content.decode()[:2000]
    assert not User.objects.get(pk=integration.pk).is_active
    assert not Endpoint.objects.get(pk=hook.pk).active and Delivery.objects.get(pk=delivery.pk).status == "cancelled"
    event = AuditEvent.objects.get(action="webhook.endpoint_changed", object_id=str(hook.pk))
    assert (event.actor, event.after["active"]) == (administrator.username, False)


def test_a_client_deactivated_without_a_save_is_sent_nothing_and_its_reactivation_resumes_nothing(
        receiver, endpoint, game, integration, operator, django_capture_on_commit_callbacks):
    hook, _secret = endpoint(["round.voided"])
    delivery = pending_delivery(hook)
    User.objects.filter(pk=integration.pk).update(is_active=False)  # no signal
    assert services.delivery_attempt(delivery.pk) == "cancelled" and receiver.requests == []
    void_a_round(game, integration, operator, django_capture_on_commit_callbacks)
    assert receiver.requests == [] and Delivery.objects.count() == 1  # no event recorded for it
    integration.refresh_from_db()
    integration.is_active = True
    integration.save()
    assert not Endpoint.objects.get(pk=hook.pk).active


def test_a_disabled_endpoint_of_a_deactivated_client_stays_off(endpoint, integration, operator, administrator):
    hook, _secret = endpoint(["round.voided"])
    delivery = pending_delivery(hook)
    integration.is_active = False
    integration.save()
    with pytest.raises(ApplicationError, match="deactivated"):
        services.endpoint_update(endpoint_id=hook.pk, actor=operator, changes={"active": True})
    with pytest.raises(Conflict, match="disabled"):
        services.delivery_redeliver(delivery_id=delivery.pk, actor=operator)
    form = {"url": hook.url, "events": ["round.voided"], "description": "", "active": "on"}
    response = client_for(administrator).post(admin_url(hook, "change"), form)
    assert response.status_code == 200 and "is deactivated" in response.content.decode()
    assert not Endpoint.objects.get(pk=hook.pk).active
    # Turned on again on purpose: the client first, then the endpoint; a cancelled delivery is sent on request.
    integration.is_active = True
    integration.save()
    services.endpoint_update(endpoint_id=hook.pk, actor=operator, changes={"active": True})
    assert services.delivery_redeliver(delivery_id=delivery.pk, actor=operator).status == "pending"


def test_a_delivery_cancelled_while_on_its_way_is_not_tried_again(endpoint, integration, monkeypatch):
    hook, _secret = endpoint(["round.voided"])
    delivery = pending_delivery(hook)

    def post_while_deactivated(delivery, body):
        integration.is_active = False
        integration.save()
        return 500, "HTTP 500", ""

    monkeypatch.setattr(services, "_post", post_while_deactivated)
    assert services.delivery_attempt(delivery.pk) == "cancelled"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.attempt_log.count()) == ("cancelled", 1, 1)


def test_staff_never_own_an_endpoint(operator, integration):
    with pytest.raises(ApplicationError, match="integration client"):
        services.endpoint_create(actor=operator, reason="new receiver",
                                                 owner=operator, url="https://hooks.example/", events=["round.voided"])
    integration.is_active = False
    integration.save()
    with pytest.raises(ApplicationError, match="deactivated"):
        services.endpoint_create(actor=operator, reason="new receiver", owner=integration, url="https://hooks.example/",
                                 events=["round.voided"])


def test_an_event_recorded_while_its_client_is_deactivated_is_never_posted(postgres, receiver, endpoint, integration,
                                                                           deliveries_left_for_a_worker):
    """On the real PostgreSQL: the event's transaction commits after the deactivation, which could
    not see its delivery; the sender cancels it when it comes due."""
    hook, _secret = endpoint(["round.voided"])
    with held_open(lambda: services.events_record("round.voided", [{"round": 1}]), 6):
        integration.is_active = False
        integration.save()
        assert not Endpoint.objects.get(pk=hook.pk).active
    delivery = Delivery.objects.get()
    assert delivery.status == "pending"
    assert services.delivery_attempt(delivery.pk) == "cancelled"
    assert receiver.requests == [] and Delivery.objects.get().last_error == services.CANCELLED
