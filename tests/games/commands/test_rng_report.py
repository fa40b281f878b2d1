"""rng_report: N rounds through the engine from fresh seeds, observed against exact frequencies."""

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from games.engine import exact_odds
from games.engine.stats import natural_probability


def run(*args):
    out, err = StringIO(), StringIO()
    call_command("rng_report", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_text_report_shape():
    out, err = run("--rounds", "3000", "--decks", "6", "--rotate-every", "700")
    lines = out.splitlines()
    assert lines[0] == "3,000 rounds of 6 decks through the engine, 5 fresh seed pairs"
    assert lines[2].split() == ["Outcome", "Observed", "Frequency", "Exact", "Expected", "Residual"]
    rows = {line.split()[0]: line.split() for line in lines[3:7]}
    assert set(rows) == {"Player", "Banker", "Tie", "Natural"}
    assert sum(int(rows[name][1].replace(",", "")) for name in ("Player", "Banker", "Tie")) == 3000
    odds = exact_odds(6)
    assert rows["Player"][3] == f"{float(odds.player):.6f}"
    assert rows["Natural"][3] == f"{float(natural_probability(6)):.6f}"
    assert re.fullmatch(r"Outcomes: chi-square \d+\.\d{4}, 2 degrees of freedom, p-value \d\.\d{4}: .+", lines[8])
    assert re.fullmatch(r"Naturals: chi-square \d+\.\d{4}, 1 degree of freedom, p-value \d\.\d{4}: .+", lines[9])
    assert err == ""  # short runs show no progress bar


def test_json_report_shape():
    out, _ = run("--rounds", "2000", "--decks", "1", "--json")
    figures = json.loads(out)
    assert figures["rounds"] == 2000 and figures["decks"] == 1 and figures["seed_pairs"] == 2
    assert [row["outcome"] for row in figures["outcomes"]] == ["PLAYER", "BANKER", "TIE"]
    assert sum(row["observed"] for row in figures["outcomes"]) == 2000
    assert figures["outcomes"][2]["probability"] == pytest.approx(float(exact_odds(1).tie))
    assert figures["chi_square"]["df"] == 2 and 0 <= figures["chi_square"]["p_value"] <= 1
    assert figures["naturals"]["chi_square"]["df"] == 1
    assert figures["naturals"]["probability"] == pytest.approx(float(natural_probability(1)))


def test_progress_bar_on_stderr():
    out, err = run("--rounds", "1500", "--rotate-every", "400", "--progress")
    assert err.startswith("\r[") and err.endswith("\n")
    frames = err.strip("\n").split("\r")[1:]
    assert frames[-1].startswith("[" + "#" * 30 + "] 100% 1,500/1,500 rounds")
    assert len(frames) <= 102
    assert "1,500 rounds" in out


def test_no_progress_bar_when_asked():
    _, err = run("--rounds", "25000", "--no-progress", "--rotate-every", "25000")
    assert err == ""


@pytest.mark.parametrize("args", [("--rounds", "0"), ("--rounds", "x"), ("--rounds", "10", "--decks", "9"),
                                  ("--rounds", "10", "--rotate-every", "0")])
def test_bad_arguments(args):
    with pytest.raises(CommandError) as error:
        run(*args)
    assert error.value.returncode == 2
