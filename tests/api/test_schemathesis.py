"""Schemathesis against the live schema: every operation, as an operator and as an integration
client, 50 examples per operation, the stateful phase following the schema's links; zero failures.

The server is gunicorn (the production server, three workers) on the test database, seeded with
a game, funded accounts, rounds and bets whose names and ids the run draws from (dictionaries), so
that the generated requests reach the code behind the 404s. Both roles run at once, each in its
own schemathesis process. Throttling is off for the run (it is tested on its own), and the
project's schemathesis.toml holds every other setting.
"""

import os
import re
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from django.db import connection

from dbutils.postgresql import urls as database_urls
from games import services as games
from tests.conftest import api_client_for
from webhooks import services as webhooks

pytestmark = pytest.mark.services

PROJECT = Path(__file__).resolve().parents[2]
EXAMPLES_PER_OPERATION = 50
PORTS = range(8231, 8250)  # this machine's range for test servers is 8200-8249; others run this test too


def free_port() -> int:
    """A port of PORTS nobody listens on (another checkout's run may hold the first)."""
    for port in PORTS:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def toml_value(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return f'"{value}"' if isinstance(value, str) else str(value)


@pytest.fixture
def seeded(postgres, game, operator, integration, funded_account):
    accounts = [funded_account(f"player-{index}", "1000.00").external_id for index in range(1, 4)]
    rounds = [games.round_open(game_id=game.pk, actor=integration) for _ in range(6)]
    bets = [games.bet_place(round_id=round_.pk, account_external_id=accounts[index % 3], bet_type="BANKER",
                            stake="5.00", idempotency_key=f"seed-{index}", client=integration)[0]
            for index, round_ in enumerate(rounds)]
    games.round_deal(round_id=rounds[0].pk, actor=integration)
    endpoint, _secret = webhooks.endpoint_create(actor=integration, reason="new receiver", owner=integration,
                                                 url="https://hooks.example/seeded", events=["alert.opened"])
    return {"slug": [game.slug], "round_id": [round_.pk for round_ in rounds], "bet_id": [bet.pk for bet in bets],
            "external_id": accounts, "endpoint_id": [endpoint.pk]}


# One seed: every run generates the same requests, so a failure found once is found again.
SEED = 20261130


def config_for(seeded: dict, path: Path) -> Path:
    """The project's config with dictionaries of the seeded names and ids."""
    base = (PROJECT / "schemathesis.toml").read_text()
    tomllib.loads(base)  # the project's file is valid on its own
    lines = [base, ""]
    for name, values in seeded.items():
        lines += [f"[dictionaries.{name}]", f"values = {toml_value(values)}", ""]
    lines.append("[parameters]")
    for name in seeded:
        lines.append(f'"path.{name}" = {{ dictionary = "{name}", probability = 0.8 }}')
    lines.append('"body.account" = { dictionary = "external_id", probability = 0.8 }')
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def server(seeded, tmp_path):
    """gunicorn on the test database (committed data: the ``postgres`` fixture), throttling off; it logs
    in as the tests do (the application role)."""
    env = {**os.environ, "DATABASE_URL": database_urls.to_url(connection.settings_dict),
           "SECRET_KEY": "schemathesis-run-only-" + "k" * 40, "HTTPS_ONLY": "0",
           # The production rule of webhook URLs (the tests' default lets them post to a local receiver).
           "WEBHOOK_ALLOW_HTTP": "0", "WEBHOOK_BLOCK_PRIVATE": "1",
           **{f"API_THROTTLE_{role}": "none" for role in ("INTEGRATION", "OPERATOR", "SUPPORT", "ADMIN", "ANONYMOUS")}}
    env.pop("DEBUG", None)
    log = (tmp_path / "gunicorn.log").open("w")
    port = free_port()
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "baccarat_site.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "3"], cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                assert process.poll() is None, (tmp_path / "gunicorn.log").read_text()  # ours, not another's
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "gunicorn.log").read_text()
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_schemathesis_finds_nothing_as_operator_and_as_integration(server, seeded, operator, integration, tmp_path):
    config = config_for(seeded, tmp_path / "schemathesis.toml")
    schemathesis = str(Path(sys.executable).with_name("schemathesis"))
    runs = {}
    for role, user in (("operator", operator), ("integration", integration)):
        token = api_client_for(user)._credentials["HTTP_AUTHORIZATION"]
        output = (tmp_path / f"{role}.log").open("w")
        runs[role] = (output, subprocess.Popen(
            [schemathesis, "--config-file", str(config), "--no-color", "run", f"{server}/api/schema/",
             "--header", f"Authorization: {token}", "--max-examples", str(EXAMPLES_PER_OPERATION),
             "--phases", "examples,coverage,fuzzing,stateful", "--seed", str(SEED),
                 # Tasks run in-process here: a deal or sweep settles inside its request, behind others.
                 "--request-timeout", "30"],
            cwd=tmp_path, stdout=output, stderr=subprocess.STDOUT))
    for output, process in runs.values():  # both to the end before any verdict (the server stays up)
        process.wait(timeout=900)
        output.close()
    for role, (_output, process) in runs.items():
        summary = (tmp_path / f"{role}.log").read_text()[-6000:]
        assert process.returncode == 0, f"as {role}:\n{summary}"
        selected = re.search(r"Selected: (\d+)/(\d+)", summary)
        tested = re.search(r"Tested: (\d+)", summary)
        assert selected and tested and selected[1] == selected[2] == tested[1], f"as {role}:\n{summary}"
        assert "unique failure" not in summary, f"as {role}:\n{summary}"
