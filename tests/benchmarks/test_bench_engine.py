"""manage.py bench_engine: runs and reports its figures (their values depend on the machine)."""

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from games.engine import bet_odds, exact_odds


def bench(*args) -> str:
    out = StringIO()
    call_command("bench_engine", *args, stdout=out)
    return out.getvalue()


def test_prints_engine_floor_ratio_and_odds_figures():
    output = bench("--rounds", "300", "--repeats", "1")
    figures = {}
    for name in ("engine", "play", "floor", "ratio", "odds", "bets"):
        match = re.search(rf"^{name}:\s+([\d,.]+)", output, re.MULTILINE)
        assert match, f"no {name} line in:\n{output}"
        figures[name] = float(match.group(1).replace(",", ""))
    assert all(value > 0 for value in figures.values())
    assert "rounds/s" in output and "blocks/s" in output and "ms" in output
    assert "300 rounds of 8 decks" in output


def test_json_figures_are_consistent():
    figures = json.loads(bench("--rounds", "200", "--repeats", "2", "--decks", "3", "--json"))
    assert figures["rounds"] == 200 and figures["decks"] == 3 and figures["repeats"] == 2
    assert figures["engine_rounds_per_second"] > 0 and figures["floor_blocks_per_second"] > 0
    assert figures["engine_to_floor"] == pytest.approx(
        figures["engine_rounds_per_second"] / figures["floor_blocks_per_second"])
    assert figures["play_to_floor"] == pytest.approx(
        figures["play_rounds_per_second"] / figures["floor_blocks_per_second"])
    assert sorted(figures["bet_odds_ms"], key=int) == [str(d) for d in range(1, 9)]
    assert figures["bet_odds_max_ms"] == max(figures["bet_odds_ms"].values())
    assert sorted(figures["odds_ms"], key=int) == [str(d) for d in range(1, 9)]
    assert figures["odds_max_ms"] == max(figures["odds_ms"].values())


def test_leaves_exact_odds_working_after_clearing_its_cache():
    bench("--rounds", "10", "--repeats", "1")
    assert float(exact_odds(8).banker) == pytest.approx(0.458597, abs=5e-7)
    assert bet_odds(8)["DRAGON_BONUS_PLAYER"].counts["WIN_BY_9"] == 18_409_431_764_992


@pytest.mark.parametrize(("args", "field"), [
    (["--rounds", "0"], "rounds"),
    (["--rounds", "many"], "rounds"),
    (["--repeats", "-1"], "repeats"),
    (["--decks", "9"], "decks"),
])
def test_bad_arguments_exit_2_naming_them(args, field):
    with pytest.raises(CommandError) as raised:
        bench(*args)
    assert raised.value.returncode == 2
    assert str(raised.value).startswith(f"{field}: ")
