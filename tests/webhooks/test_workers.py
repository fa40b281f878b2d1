"""Webhook delivery by real Celery workers (PostgreSQL, Redis): a worker killed mid-delivery loses nothing."""

import pytest

from games import services as game_services
from tests.settlement.workers import Workers, reset_broker_pools, wait_for
from webhooks.models import Delivery
from webhooks.tasks import sweep

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def broker(postgres, redis_url):
    from baccarat_site.celery import app

    saved = {"broker_url": app.conf.broker_url, "task_always_eager": app.conf.task_always_eager}
    reset_broker_pools(app)
    app.conf.update(broker_url=redis_url, task_always_eager=False)
    yield app
    reset_broker_pools(app)
    app.conf.update(saved)


@pytest.fixture
def workers(broker, redis_url, tmp_path):
    pool = Workers(tmp_path, redis_url)
    yield pool
    pool.stop_all()


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
