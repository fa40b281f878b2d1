"""Through gunicorn with three workers, configured by the project's gunicorn.conf.py (its multiprocess
directory and hooks): real bets over HTTP move the counters, and /metrics sums every worker's counts,
whichever worker answers the scrape."""

import json
import os
import runpy
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.db import connection
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector

from dbutils.postgresql import urls as database_urls
from games import services as game_services
from tests.conftest import api_client_for
from tests.monitoring.helpers import TOKEN, parse, value

PROJECT = Path(__file__).resolve().parents[2]
BETS = 40


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def call(base: str, method: str, path: str, body: dict | None = None, headers: dict | None = None):
    request = urllib.request.Request(base + path, method=method, headers=headers or {},
                                     data=json.dumps(body).encode() if body is not None else None)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture
def flush_seconds():
    """METRICS_FLUSH_SECONDS of the server: the production default."""
    return "1"


@pytest.fixture
def server(postgres, tmp_path, flush_seconds):
    metrics_dir = tmp_path / "metrics"
    env = {**os.environ, "DATABASE_URL": database_urls.to_url(connection.settings_dict),
           "SECRET_KEY": "monitoring-test-only-" + "k" * 40, "HTTPS_ONLY": "0", "METRICS_TOKEN": TOKEN,
           "METRICS_FLUSH_SECONDS": flush_seconds,
           "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "API_THROTTLE_INTEGRATION": "none", "LOG_LEVEL": "WARNING"}
    for name in ("DEBUG", "CELERY_BROKER_URL", "METRICS_ENABLED"):
        env.pop(name, None)
    port = free_port()
    log_path = tmp_path / "gunicorn.log"
    with log_path.open("w") as log:
        process = subprocess.Popen([str(Path(sys.executable).with_name("gunicorn")), "baccarat_site.wsgi",
                                    "--bind", f"127.0.0.1:{port}", "--workers", "3"],
                                   cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None and time.monotonic() < deadline, log_path.read_text()
                try:
                    if call(base, "GET", "/-/alive")[0] == 200:
                        break
                except OSError:
                    time.sleep(0.2)
            yield base, metrics_dir, process
        finally:
            process.terminate()
            process.wait(timeout=30)


def scrape(base: str) -> dict:
    status, body = call(base, "GET", "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert status == 200, body
    return parse(body.decode())


def test_bets_through_three_workers_are_summed_in_every_scrape(server, game, integration, funded_account):
    base, metrics_dir, _process = server
    funded_account("player-1", "1000.00")
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    token = api_client_for(integration).api_token_secret
    headers = {"Authorization": f"Token {token}"}
    assert call(base, "GET", "/metrics")[0] == 401

    def place(number: int) -> int:
        body = {"account": "player-1", "bet_type": "PLAYER" if number % 2 else "BANKER", "stake": "1.00",
                "idempotency_key": f"gunicorn-{number}"}
        return call(base, "POST", f"/api/v1/rounds/{round_.pk}/bets/", body, headers)[0]

    with ThreadPoolExecutor(max_workers=8) as pool:  # at once: the three workers share them
        statuses = list(pool.map(place, range(BETS)))
    assert statuses == [201] * BETS
    refused = {"account": "player-1", "bet_type": "TIE", "stake": "5000.00", "idempotency_key": "too-much"}
    assert call(base, "POST", f"/api/v1/rounds/{round_.pk}/bets/", refused, headers)[0] == 400

    # Each worker writes its counts within METRICS_FLUSH_SECONDS (the one answering a scrape, at once).
    deadline = time.monotonic() + 30
    while not counted_every_bet(scrape(base)):
        assert time.monotonic() < deadline, scrape(base)
        time.sleep(0.2)
    writers = {path.stem.rpartition("_")[2] for path in metrics_dir.glob("counter_*.db")}
    assert len(writers) >= 2, writers  # more than one worker counted bets
    for _ in range(6):  # each scrape answered by any worker, each the sum of all
        figures = scrape(base)
        assert counted_every_bet(figures), figures
        assert value(figures, "baccarat_metrics_database_up") == 1
    status, body = call(base, "GET", "/-/ready")
    assert status == 200, body
    assert json.loads(body)["failing"] == []


def counted_every_bet(figures: dict) -> bool:
    return (value(figures, "baccarat_bets_accepted_total", game="main-table", bet_type="PLAYER") == BETS / 2
            and value(figures, "baccarat_bets_accepted_total", game="main-table", bet_type="BANKER") == BETS / 2
            and value(figures, "baccarat_bets_refused_total", reason="invalid_stake") == 1  # beyond the game's limit
            and value(figures, "baccarat_http_request_duration_seconds_count", view="api:round-bets", method="POST",
                      status="201") == BETS)


@pytest.mark.parametrize("flush_seconds", ["3600"])
def test_a_stopping_worker_writes_what_it_kept(server, game, integration, funded_account):
    """Workers that would write only once an hour: stopping gunicorn (each worker exits) writes them."""
    base, metrics_dir, process = server
    funded_account("player-1", "1000.00")
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    headers = {"Authorization": f"Token {api_client_for(integration).api_token_secret}"}

    def place(number: int) -> int:
        body = {"account": "player-1", "bet_type": "PLAYER", "stake": "1.00", "idempotency_key": f"stop-{number}"}
        return call(base, "POST", f"/api/v1/rounds/{round_.pk}/bets/", body, headers)[0]

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(place, range(BETS))) == [201] * BETS
    process.terminate()
    process.wait(timeout=30)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(metrics_dir))
    figures = {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
               for family in registry.collect() for sample in family.samples}
    assert value(figures, "baccarat_bets_accepted_total", game="main-table", bet_type="PLAYER") == BETS
    assert value(figures, "baccarat_http_request_duration_seconds_count", view="api:round-bets", method="POST",
                 status="201") == BETS


def test_the_configuration_makes_a_directory_of_its_own_and_clears_dead_processes_files():
    previous = os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
    try:
        config = runpy.run_path(str(PROJECT / "gunicorn.conf.py"))
        made = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
        assert made.is_dir()
        (made / "counter_999999999.db").write_bytes(b"")  # a process that is no more
        (made / f"counter_{os.getpid()}.db").write_bytes(b"")  # a running one (a Celery worker's)
        config["on_starting"](None)
        assert [path.name for path in made.iterdir()] == [f"counter_{os.getpid()}.db"]
        config["on_exit"](None)
        assert not made.exists()
    finally:
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        if previous is not None:
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = previous
