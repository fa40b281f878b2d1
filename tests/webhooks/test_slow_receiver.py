"""A queue per workload: a webhook endpoint that hangs for the whole timeout on 1,000 deliveries does
not hold settlement back. Real Celery workers, one for the settlement queue and two for the webhooks
queue (as `make prod` starts them), on the test database and the tests' Redis; a local receiver that
answers each request only after the delivery's timeout has passed."""

import math
import time

import pytest
from django.db import transaction

from games import services as game_services
from games.choices import RoundStatus
from games.models import Round
from tests.settlement.workers import wait_for
from webhooks.choices import EventType
from webhooks.models import Delivery
from webhooks.services import events_record

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

TIMEOUT_SECONDS = 0.5  # the workers' WEBHOOK_TIMEOUT_SECONDS; the receiver answers after 6 times that
DELIVERIES = 1000
ROUNDS = 40
LAG_P99_LIMIT_SECONDS = 2.0


def test_a_hanging_endpoint_leaves_settlement_lag_p99_under_two_seconds(
        workers, receiver, endpoint, game, integration, funded_account):
    receiver.script = [("sleep", TIMEOUT_SECONDS * 6)] * (DELIVERIES + 2 * ROUNDS)
    endpoint(["round.voided", "round.settled"])
    funded_account("player-1", "100000.00")
    timeout = {"WEBHOOK_TIMEOUT_SECONDS": str(TIMEOUT_SECONDS)}
    workers.start(1, queues=("settlement",), **timeout)
    workers.start(2, queues=("webhooks",), **timeout)

    with transaction.atomic():  # 1,000 deliveries handed to the webhooks queue when this commits
        assert events_record(EventType.ROUND_VOIDED, [{"n": n} for n in range(DELIVERIES)]) == DELIVERIES
    wait_for(lambda: len(receiver.requests) >= 2, 30, f"the endpoint to be hanging:\n{workers.logs_tail()}")

    dealt = []
    for n in range(ROUNDS):  # dealt one after another while the deliveries time out
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        game_services.bet_place(round_id=round_.pk, account_external_id="player-1", bet_type="BANKER",
                                stake="10.00", idempotency_key=f"bet-{n}", client=integration)
        game_services.round_deal(round_id=round_.pk, actor=integration)
        dealt.append(round_.pk)
        time.sleep(0.05)
    wait_for(lambda: not Round.objects.filter(pk__in=dealt).exclude(status=RoundStatus.SETTLED).exists(), 60,
             f"every dealt round to be settled:\n{workers.logs_tail()}")

    lags = sorted((dealt_round.settled_at - dealt_round.dealt_at).total_seconds()
                  for dealt_round in Round.objects.filter(pk__in=dealt))
    p99 = lags[math.ceil(0.99 * len(lags)) - 1]
    assert p99 < LAG_P99_LIMIT_SECONDS, lags
    # The endpoint hung all along: most of the 1,000 deliveries were still waiting for their first attempt.
    assert Delivery.objects.filter(status="pending", attempts=0).count() > DELIVERIES // 2
