"""The single-file verifier players download: standard library only, same rounds as the engine."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import SIDE_BET_TYPES, verify_round

SCRIPT = Path(__file__).resolve().parents[2] / "games" / "static" / "games" / "pf1_verify.py"
VECTORS = json.loads((Path(__file__).resolve().parents[1] / "data" / "pf1-vectors.json").read_text())


def load_script():
    spec = importlib.util.spec_from_file_location("pf1_verify", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_imports_nothing_but_the_standard_library():
    imported = {line.split()[1].split(".")[0] for line in SCRIPT.read_text().splitlines()
                if line.startswith(("import ", "from "))}
    assert imported <= set(sys.stdlib_module_names)


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"{v['client_seed']}:{v['nonce']}:{v['decks']}")
def test_reproduces_every_vector(vector):
    script = load_script()
    played = script.play(vector["server_seed"], vector["client_seed"], vector["nonce"], vector["decks"])
    assert played == vector["expected"]


@settings(max_examples=300)
@given(server_seed=st.binary(min_size=32, max_size=32).map(bytes.hex),
       client_seed=st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=64),
       nonce=st.integers(0, 2**40), decks=st.integers(1, 8))
def test_agrees_with_the_engine(server_seed, client_seed, nonce, decks):
    script = load_script()
    assert script.play(server_seed, client_seed, nonce, decks) == verify_round(server_seed, client_seed, nonce, decks)


def test_command_line_checks_the_published_hash():
    vector = VECTORS[0]
    args = [sys.executable, str(SCRIPT), "--server-seed", vector["server_seed"], "--client-seed",
            vector["client_seed"], "--nonce", str(vector["nonce"]), "--decks", str(vector["decks"])]
    good = subprocess.run(args + ["--hash", vector["expected"]["server_seed_hash"]], capture_output=True, text=True)
    printed = json.loads(good.stdout)
    assert good.returncode == 0 and set(printed.pop("side_bets")) == set(SIDE_BET_TYPES)  # test_verifier_side_bets
    assert printed == vector["expected"]
    bad = subprocess.run(args + ["--hash", "0" * 64], capture_output=True, text=True)
    assert bad.returncode == 1 and "DOES NOT MATCH" in bad.stderr
    refused = subprocess.run(args[:3] + ["XYZ"] + args[4:], capture_output=True, text=True)
    assert refused.returncode == 2 and "--server-seed" in refused.stderr
