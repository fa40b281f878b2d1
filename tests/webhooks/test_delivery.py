"""Webhook deliveries to a real HTTP receiver on the loopback: signed, retried, logged, never for a rollback."""

import json
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from alerts import services as alert_services
from alerts.checks import Finding
from games import services as game_services
from settlement import services as settlement_services
from tests.conftest import verified_login
from tests.webhooks.receiver import verifies
from webhooks import services
from webhooks.models import Delivery, DeliveryAttempt, Event
from webhooks.tasks import sweep

pytestmark = pytest.mark.django_db


def void(round_, operator, capture, reason="misdeal"):
    with capture(execute=True):  # the deliveries are handed over when the void commits
        game_services.round_void(round_id=round_.pk, actor=operator, reason=reason)


def sweep_until_settled(capture, rounds=10):
    for _ in range(rounds):
        Delivery.objects.filter(status="pending").update(next_attempt_at=timezone.now())  # the backoff has passed
        with capture(execute=True):
            sweep.delay().get()
        if not Delivery.objects.filter(status="pending").exists():
            return


def test_a_void_is_delivered_signed_with_its_event_id(receiver, endpoint, dealt_round, operator,
                                                      django_capture_on_commit_callbacks):
    _endpoint, secret = endpoint(["round.voided"])
    void(dealt_round, operator, django_capture_on_commit_callbacks)
    [(headers, body)] = receiver.requests
    event = json.loads(body)
    assert verifies(headers, body, secret)
    assert not verifies(headers, body, "whsec_wrong") and not verifies(headers, body + b" ", secret)
    assert not verifies(headers, body, secret, now=int(timezone.now().timestamp()) + 3600)  # a replay, later
    assert headers["baccarat-event-id"] == event["id"] == str(Event.objects.get().pk)
    assert event["type"] == "round.voided" and event["data"]["round"] == dealt_round.pk
    assert event["data"]["status"] == "VOID" and event["data"]["void_reason"] == "misdeal"
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("delivered", 1)
    assert list(DeliveryAttempt.objects.values_list("number", "status_code")) == [(1, 200)]


def test_nothing_is_delivered_for_a_change_that_rolled_back(receiver, endpoint, dealt_round, operator,
                                                             django_capture_on_commit_callbacks):
    endpoint(["round.voided"])
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        game_services.round_void(round_id=dealt_round.pk, actor=operator, reason="misdeal")
        raise RuntimeError("the request failed after the void")
    sweep_until_settled(django_capture_on_commit_callbacks)
    assert not Event.objects.exists() and not Delivery.objects.exists() and receiver.requests == []


def test_retries_after_500s_with_each_attempt_logged(receiver, endpoint, dealt_round, operator, settings,
                                                     django_capture_on_commit_callbacks):
    receiver.script = [("status", 500), ("status", 503)]
    endpoint(["round.voided"])
    void(dealt_round, operator, django_capture_on_commit_callbacks)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("pending", 1, "HTTP 500")
    assert delivery.next_attempt_at > timezone.now() + timedelta(seconds=settings.WEBHOOK_BACKOFF_SECONDS - 1)
    sweep_until_settled(django_capture_on_commit_callbacks)
    assert list(DeliveryAttempt.objects.values_list("number", "status_code", "error")) == [
        (1, 500, "HTTP 500"), (2, 503, "HTTP 503"), (3, 200, "")]
    assert len({json.loads(body)["id"] for _headers, body in receiver.requests}) == 1  # one event, three tries
    assert Delivery.objects.get().status == "delivered"


def test_a_timeout_is_retried(receiver, endpoint, dealt_round, operator, settings,
                              django_capture_on_commit_callbacks):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    receiver.script = [("sleep", 1.0)]
    endpoint(["round.voided"])
    void(dealt_round, operator, django_capture_on_commit_callbacks)
    [first] = DeliveryAttempt.objects.all()
    assert first.status_code is None and "timed out" in first.error
    sweep_until_settled(django_capture_on_commit_callbacks)
    assert Delivery.objects.get().status == "delivered" and DeliveryAttempt.objects.count() == 2


def test_backoff_doubles_up_to_its_cap(settings):
    settings.WEBHOOK_BACKOFF_SECONDS, settings.WEBHOOK_BACKOFF_MAX_SECONDS = 10, 60
    assert [services.backoff_seconds(n) for n in range(1, 6)] == [10, 20, 40, 60, 60]


def test_given_up_after_the_attempts_then_redelivered_from_the_admin(receiver, endpoint, dealt_round, operator,
                                                                     settings, django_capture_on_commit_callbacks):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    receiver.script = [("status", 500)] * 2
    endpoint(["round.voided"])
    void(dealt_round, operator, django_capture_on_commit_callbacks)
    sweep_until_settled(django_capture_on_commit_callbacks)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("failed", 2)
    from django.test import Client

    client = Client()
    verified_login(client, operator)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/admin/webhooks/delivery/", {"action": "redeliver", "_selected_action": [delivery.pk]})
    delivery.refresh_from_db()
    assert (delivery.status, DeliveryAttempt.objects.count(), len(receiver.requests)) == ("delivered", 3, 3)
    page = client.get(f"/admin/webhooks/delivery/{delivery.pk}/change/").content.decode()
    assert "HTTP 500" in page and "round.voided" in page


def test_a_rotated_secret_signs_beside_the_new_one_until_the_overlap_ends(
        receiver, endpoint, dealt_round, game, integration, operator, django_capture_on_commit_callbacks):
    hook, old = endpoint(["round.voided"])
    new = services.endpoint_rotate_secret(endpoint_id=hook.pk, actor=integration)
    void(dealt_round, operator, django_capture_on_commit_callbacks)
    headers, body = receiver.requests[-1]
    assert verifies(headers, body, old) and verifies(headers, body, new)
    hook.secrets.filter(expires_at__isnull=False).update(expires_at=timezone.now())  # the overlap ends
    second = game_services.round_open(game_id=game.pk, actor=integration)
    void(second, operator, django_capture_on_commit_callbacks)
    headers, body = receiver.requests[-1]
    assert verifies(headers, body, new) and not verifies(headers, body, old)


def test_settlement_reveals_and_alerts_are_delivered(receiver, endpoint, dealt_round, game, operator,
                                                     django_capture_on_commit_callbacks):
    endpoint(["round.settled", "bet.settled", "seeds.revealed", "alert.opened"])
    with django_capture_on_commit_callbacks(execute=True):
        settlement_services.settlement_run(round_ids=[dealt_round.pk])
        game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
        alert_services.alert_raise(Finding("large_payout", "bet:1", "warning", "Bet 1 paid a lot."))
    by_type = {event["type"]: event["data"] for event in receiver.events()}
    assert by_type["round.settled"]["round"] == dealt_round.pk and by_type["round.settled"]["status"] == "SETTLED"
    assert by_type["bet.settled"]["stake"] == "10.00" and by_type["bet.settled"]["status"] in ("WON", "LOST", "PUSH")
    # A main bet: no paytable of its own; its event is the round's outcome.
    assert by_type["bet.settled"]["paytable"] is None
    assert by_type["bet.settled"]["event"] == dealt_round.outcome
    assert len(by_type["seeds.revealed"]["server_seed"]) == 64
    assert by_type["alert.opened"]["message"] == "Bet 1 paid a lot."
