"""gunicorn with LOG_FORMAT=json, as configured by the project's gunicorn.conf.py: every line it
writes, its own (start-up, workers, shutdown) and the application's, is one JSON object, and a bet's
request line names its request id, user, game, round and bet."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from django.db import connection

from dbutils.postgresql import urls as database_urls
from games import services as game_services
from tests.conftest import api_client_for

PROJECT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(url: str, body: dict, headers: dict) -> int:
    request = urllib.request.Request(url, method="POST", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_every_line_of_gunicorn_is_json(postgres, tmp_path, game, integration, funded_account):
    funded_account("player-1", "100.00")
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    token = api_client_for(integration).api_token_secret
    env = {**os.environ, "DATABASE_URL": database_urls.to_url(connection.settings_dict), "LOG_FORMAT": "json",
           "SECRET_KEY": "log-test-only-" + "k" * 40, "HTTPS_ONLY": "0",
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")}
    for name in ("DEBUG", "CELERY_BROKER_URL", "LOG_REQUESTS"):
        env.pop(name, None)
    port, log_path = free_port(), tmp_path / "gunicorn.log"
    with log_path.open("w") as log:
        process = subprocess.Popen([str(Path(sys.executable).with_name("gunicorn")), "baccarat_site.wsgi",
                                    "--bind", f"127.0.0.1:{port}", "--workers", "2"],
                                   cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            status = None
            while status is None:
                assert process.poll() is None and time.monotonic() < deadline, log_path.read_text()
                try:
                    status = post(f"http://127.0.0.1:{port}/api/v1/rounds/{round_.pk}/bets/", {
                        "account": "player-1", "bet_type": "TIE", "stake": "1.00", "idempotency_key": "g1"},
                        {"Authorization": f"Token {token}", "X-Request-ID": "gunicorn-bet-1"})
                except OSError:
                    time.sleep(0.2)
            assert status == 201
        finally:
            process.terminate()
            process.wait(timeout=30)

    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    loggers = {line["logger"] for line in lines}
    assert "gunicorn.error" in loggers and "audit.middleware" in loggers  # gunicorn's own lines, and ours
    [bet] = [line for line in lines if line.get("request_id") == "gunicorn-bet-1"]
    assert bet == {**bet, "user": integration.username, "game": game.pk, "round": round_.pk, "status": 201}
    assert isinstance(bet["bet"], int)
