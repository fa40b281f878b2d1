"""manage.py odds: the exact odds table, and --json in the shape of games.engine.odds_report."""

import json
import os
import re
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from games.engine import (
    DEFAULT_MULTIPLIERS,
    REGISTRY,
    BetType,
    Multipliers,
    bet_odds_report,
    exact_odds,
    main_paytables,
    make_paytable,
    odds_report,
    return_to_player,
)

PROJECT = Path(__file__).resolve().parents[3]


def odds(*args) -> str:
    out = StringIO()
    call_command("odds", *args, stdout=out)
    return out.getvalue()


def odds_error(*args) -> CommandError:
    with pytest.raises(CommandError) as raised:
        odds(*args)
    assert raised.value.returncode == 2
    assert "\n" not in str(raised.value)
    return raised.value


def test_json_has_exactly_the_documented_shape_and_values():
    output = odds("--json")
    assert output.count("\n") == 1
    report = json.loads(output)
    assert list(report) == ["decks", "probabilities", "rtp", "deals", "bets"]
    assert report == {
        "decks": 8,
        "probabilities": {"player": float(exact_odds(8).player), "banker": float(exact_odds(8).banker),
                          "tie": float(exact_odds(8).tie)},
        "rtp": {bet.lower(): float(return_to_player(exact_odds(8), bet, DEFAULT_MULTIPLIERS))
                for bet in BetType.ALL},
        "deals": 4_998_398_275_503_360,
        "bets": bet_odds_report(8)["bets"],
    }
    assert round(report["probabilities"]["banker"], 6) == 0.458597
    assert round(report["probabilities"]["player"], 6) == 0.446247
    assert round(report["probabilities"]["tie"], 6) == 0.095156


def test_json_floats_carry_full_precision():
    report = json.loads(odds("--json"))
    for value in report["probabilities"].values():
        assert value == float(repr(value))
        assert len(repr(value).lstrip("0.").replace(".", "")) >= 15


@pytest.mark.parametrize("decks", range(1, 9))
def test_json_for_every_deck_count(decks):
    report = json.loads(odds("--json", "--decks", str(decks)))
    assert {key: report[key] for key in ("decks", "probabilities", "rtp")} == odds_report(decks, DEFAULT_MULTIPLIERS)
    assert report["decks"] == decks
    assert report["bets"] == bet_odds_report(decks)["bets"]
    for bet in report["bets"].values():
        assert all(isinstance(row["combinations"], int) for row in bet["events"])
        assert sum(row["combinations"] for row in bet["events"]) == report["deals"]


def test_json_with_custom_multipliers():
    report = json.loads(odds("--json", "--player", "1.9", "--banker", "2", "--tie", "8.5"))
    multipliers = Multipliers(Decimal("1.9"), Decimal("2"), Decimal("8.5"))
    assert {key: report[key] for key in ("decks", "probabilities", "rtp")} == odds_report(8, multipliers)
    assert report["bets"] == bet_odds_report(8, main_paytables(multipliers))["bets"]
    assert report["bets"]["TIE"]["rtp"] == report["rtp"]["tie"]
    assert report["rtp"]["tie"] == float(exact_odds(8).tie * Fraction(17, 2))


def test_table_shows_probabilities_to_6_places_and_rtp_and_house_edge_per_bet():
    table = odds()
    assert table.splitlines()[0].startswith("Exact odds, 8 decks")
    probabilities = {}
    for line in table.splitlines():
        match = re.fullmatch(r"(Player|Banker|Tie)\s+(0\.\d{6,})", line)
        if match:
            probabilities[match.group(1)] = float(match.group(2))
    assert {k: round(v, 6) for k, v in probabilities.items()} == {
        "Player": 0.446247, "Banker": 0.458597, "Tie": 0.095156}
    bets = {}
    for line in table.splitlines():
        match = re.fullmatch(r"(Player|Banker|Tie)\s+([\d.]+)\s+([\d.]+) %\s+(-?[\d.]+) %", line)
        if match:
            bets[match.group(1)] = tuple(float(x) for x in match.groups()[1:])
    assert bets.keys() == {"Player", "Banker", "Tie"}
    for bet, (multiplier, rtp, edge) in bets.items():
        assert multiplier == float(getattr(DEFAULT_MULTIPLIERS, bet.lower()))
        assert rtp + edge == pytest.approx(100)
    assert round(bets["Banker"][1], 2) == 98.94
    assert round(bets["Player"][1], 2) == 98.76
    assert round(bets["Tie"][1], 2) == 85.64


def test_table_uses_the_multipliers_given():
    table = odds("--tie", "8")
    assert re.search(r"Tie\s+8\s+76\.12\d* %", table)  # 8 × 0.095156 = 0.7612


@pytest.mark.parametrize(("args", "name", "problem"), [
    (["--player", "0.99"], "player", "at least"),
    (["--banker", "0"], "banker", "at least"),
    (["--tie", "-9"], "tie", "at least"),
    (["--tie", "abc"], "tie", "decimal number"),
    (["--player", "NaN"], "player", "ASCII digits"),
    (["--banker", "Infinity"], "banker", "ASCII digits"),
    (["--tie", "1000.5"], "tie", "at most 1000"),
    (["--player", "1.23456"], "player", "decimal places"),
])
def test_bad_multiplier_is_an_error_naming_it(args, name, problem):
    error = odds_error(*args)
    assert str(error).startswith(f"{name} multiplier: ")
    assert problem in str(error)


@pytest.mark.parametrize("decks", ["0", "9", "-1", "x", "1.5"])
def test_bad_decks_is_an_error(decks):
    assert str(odds_error("--decks", decks)).startswith("decks: ")


def test_bad_multiplier_exits_2_with_one_line_on_stderr():
    env = {**os.environ, "SECRET_KEY": "insecure-test-only-key",
           "DJANGO_SETTINGS_MODULE": "baccarat_site.settings"}
    completed = subprocess.run([sys.executable, "manage.py", "odds", "--banker", "0.5"], cwd=PROJECT, env=env,
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2
    assert completed.stdout == ""
    lines = completed.stderr.splitlines()
    assert len(lines) == 1
    assert "banker multiplier" in lines[0]


def test_json_gives_every_bet_types_events_with_exact_combinations():
    report = json.loads(odds("--json"))
    assert list(report["bets"]) == list(REGISTRY)
    dragon = {row["event"]: row for row in report["bets"]["DRAGON_BONUS_PLAYER"]["events"]}
    assert dragon["WIN_BY_9"]["combinations"] == 18_409_431_764_992
    assert dragon["WIN_BY_9"]["multiplier"] == "31" and dragon["NATURAL_TIE"]["settlement"] == "PUSH"
    assert round(1 - report["bets"]["DRAGON_BONUS_BANKER"]["rtp"], 6) == 0.093731


def test_a_paytable_given_replaces_the_default():
    report = json.loads(odds("--json", "--decks", "6", "--paytable", "PERFECT_PAIR",
                             '{"ONE_PERFECT_PAIR": 26.0, "TWO_PERFECT_PAIRS": "251"}'))
    expected = bet_odds_report(6, {"PERFECT_PAIR": make_paytable(
        "PERFECT_PAIR", {"ONE_PERFECT_PAIR": "26.0", "TWO_PERFECT_PAIRS": "251"})})  # JSON 26.0 read exactly
    assert report["bets"]["PERFECT_PAIR"] == expected["bets"]["PERFECT_PAIR"]
    assert report["bets"]["PERFECT_PAIR"] != bet_odds_report(6)["bets"]["PERFECT_PAIR"]


@pytest.mark.parametrize(("args", "start"), [
    (["NOPE", "{}"], "paytable NOPE: no such bet type"),
    (["PLAYER", '{"PLAYER": "2"}'], "paytable PLAYER: the main bets' multipliers are --player"),
    (["PLAYER_PAIR", "not json"], "paytable PLAYER_PAIR: must be a JSON object"),
    (["PLAYER_PAIR", '{"PAIR": "0.5"}'], "paytable PLAYER_PAIR.PAIR: must be at least 1.0"),
    (["PLAYER_PAIR", '{"TWO_PAIRS": "6"}'], "paytable PLAYER_PAIR.TWO_PAIRS: is not an event of PLAYER_PAIR"),
    (["DRAGON_BONUS_PLAYER", '{"NATURAL_TIE": "1.5"}'], "paytable DRAGON_BONUS_PLAYER.NATURAL_TIE: is a push"),
    (["EITHER_PAIR", '["ONE_PAIR"]'], "paytable EITHER_PAIR.paytable: must map events"),
])
def test_a_bad_paytable_is_an_error_naming_the_bet_type_and_event(args, start):
    assert str(odds_error("--paytable", *args)).startswith(start)


def test_table_shows_every_bet_type_as_the_published_tables():
    table = odds()
    assert "deals out of 4,998,398,275,503,360 ordered six-card deals" in table
    for kind in REGISTRY.values():
        assert f"{kind.label} ({kind.name})" in table
    assert re.search(r"^WIN_BY_9\s+31\s+18,409,431,764,992\s+0\.00368307\s+0\.11417505$", table, re.MULTILINE)
    assert "Return to player 97.3483 %, house edge 2.6517 %" in table  # Dragon Bonus Player
    assert "Return to player 98.5419 %, house edge 1.4581 %" in table  # commission-free Banker
