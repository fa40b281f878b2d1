"""Webhook delivery by real Celery workers (PostgreSQL, Redis): a worker killed mid-delivery loses nothing."""

import pytest

from games import services as game_services
from tests.settlement.workers import wait_for
from webhooks.models import Delivery
from webhooks.tasks import sweep

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_a_worker_killed_mid_delivery_loses_nothing(workers, receiver, endpoint, game, integration, operator):
    endpoint(["round.voided"])
    receiver.script = [("hold", None)]  # the first request hangs: the worker is killed in the middle of it
    round_ = game_services.round_open(game_id=game.pk, actor=integration)  # open: voided without a second person
    [first] = workers.start(1)
    game_services.round_void(round_id=round_.pk, actor=operator, reason="misdeal")  # commits: the task is sent
    assert receiver.arrived.wait(30), workers.logs_tail()
    first.kill()
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("pending", 1)  # claimed, never finished
    # The claim's lease (timeout + margin) runs out; then the periodic sweep hands it to another worker.
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=delivery.next_attempt_at.replace(year=2000))
    workers.start(1)
    sweep.delay()
    wait_for(lambda: Delivery.objects.get().status == "delivered", 30, f"the redelivery:\n{workers.logs_tail()}")
    ids = [event["id"] for event in receiver.events()]
    assert len(ids) == 2 and len(set(ids)) == 1  # at least once, the same event id to de-duplicate by
    assert Delivery.objects.get().attempts == 2
