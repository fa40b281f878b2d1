"""A real Celery worker with PROMETHEUS_MULTIPROC_DIR: the settlement it runs (task duration by task
and queue, lag, batch) lands in that directory, where the web's /metrics reads it on the same host."""

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from games import services as game_services
from tests.monitoring.helpers import parse, value

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_a_worker_writes_its_task_and_settlement_metrics_to_the_shared_directory(broker, workers, game,  # noqa: F811
                                                                                 integration, funded_account,
                                                                                 tmp_path):
    metrics_dir = tmp_path / "metrics"
    funded_account("player-1", "100.00")
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.bet_place(round_id=round_.pk, account_external_id="player-1", bet_type="PLAYER", stake="5.00",
                            idempotency_key="worker", client=integration)
    game_services.round_deal(round_id=round_.pk, actor=integration)  # sends settle_rounds to the broker
    workers.start(1, PROMETHEUS_MULTIPROC_DIR=str(metrics_dir))
    workers.wait_for_results(1)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(metrics_dir))
    figures = parse(generate_latest(registry).decode())
    task = {"task": "settlement.settle_rounds", "queue": "settlement"}
    assert value(figures, "baccarat_celery_task_duration_seconds_count", **task) == 1
    assert value(figures, "baccarat_settlement_batches_total", outcome="ok") == 1
    assert value(figures, "baccarat_settlement_lag_seconds_count") == 1
    assert value(figures, "baccarat_celery_task_failures_total", **task) == 0
