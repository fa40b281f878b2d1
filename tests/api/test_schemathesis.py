"""Schemathesis against the live schema: every operation, as an operator and as an integration
client, 50 examples per operation, the stateful phase following the schema's links; zero failures.

The server is pytest-django's live server on the test database, seeded with a game, funded
accounts, rounds and bets whose names and ids the run draws from (dictionaries), so that the
generated requests reach the code behind the 404s. Throttling is off for the run (it is tested on
its own), and the project's schemathesis.toml holds every other setting.
"""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from games import services as games
from tests.conftest import api_client_for

pytestmark = pytest.mark.services

PROJECT = Path(__file__).resolve().parents[2]
EXAMPLES_PER_OPERATION = 50


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
    return {"slug": [game.slug], "round_id": [round_.pk for round_ in rounds], "bet_id": [bet.pk for bet in bets],
            "external_id": accounts}


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


@pytest.mark.parametrize("role", ["operator", "integration"])
def test_schemathesis_finds_nothing(seeded, live_server, settings, tmp_path, request, role):
    settings.API_THROTTLE_RATES = {name: "none" for name in settings.API_THROTTLE_RATES}
    user = request.getfixturevalue(role)
    token = api_client_for(user)._credentials["HTTP_AUTHORIZATION"]
    config = config_for(seeded, tmp_path / "schemathesis.toml")
    schemathesis = str(Path(sys.executable).with_name("schemathesis"))
    result = subprocess.run(
        [schemathesis, "--config-file", str(config), "--no-color", "run", f"{live_server.url}/api/schema/",
         "--header", f"Authorization: {token}", "--max-examples", str(EXAMPLES_PER_OPERATION),
         "--phases", "examples,coverage,fuzzing,stateful", "--workers", "2"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "SCHEMATHESIS_HOOKS": ""},
    )
    summary = result.stdout[-6000:]
    assert result.returncode == 0, summary
    assert "Tested: 27" in summary or "Tested:" in summary, summary
    assert " passed" in summary and "failures" not in summary.split("SUMMARY")[-1], summary
