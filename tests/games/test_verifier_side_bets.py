"""The offline verifier's side bets: pf1_verify.py reimplements each side bet's rule with nothing but the
standard library, and must yield the engine's event (games/engine/bets.py) on every round."""

import json
import random
import subprocess
import sys

import pytest

from games.engine import REGISTRY, SIDE_BET_TYPES, Dealer, round_events
from games.engine.rules import play_positions

from .test_standalone_verifier import SCRIPT, VECTORS, load_script


def engine_side_bets(result) -> dict:
    return {name: event for name, event in round_events(result).items() if name in SIDE_BET_TYPES}


@pytest.fixture(scope="module")
def script():
    return load_script()


@pytest.mark.parametrize("decks", range(1, 9))
def test_every_side_bet_agrees_with_the_engine_on_dealt_rounds(script, decks):
    rng = random.Random(f"side-bets-{decks}")
    for _pair in range(4):
        server_seed, client_seed = rng.randbytes(32).hex(), f"player-{rng.randrange(10**6)}"
        dealer = Dealer(server_seed, client_seed)
        for nonce in rng.sample(range(2**32), 100):
            played = script.play(server_seed, client_seed, nonce, decks)
            assert script.side_bets(played) == engine_side_bets(dealer.play(nonce, decks)), (server_seed, nonce)


def test_every_side_bet_agrees_with_the_engine_on_any_cards_and_yields_each_of_its_events(script):
    # Cards drawn at random from the largest shoe reach every event, the rare ones too (two perfect
    # pairs, a Dragon Bonus win by 9), which a few thousand dealt rounds may not.
    rng = random.Random("any-cards")
    seen = {name: set() for name in SIDE_BET_TYPES}
    for _ in range(50_000):
        result = play_positions(*(rng.randrange(52 * 8) for _ in range(6)))
        events = script.side_bets(result.as_dict())
        assert events == engine_side_bets(result), result.as_dict()
        for name, event in events.items():
            seen[name].add(event)
    assert seen == {name: set(REGISTRY[name].events) for name in SIDE_BET_TYPES}


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"{v['client_seed']}:{v['nonce']}:{v['decks']}")
def test_every_side_bet_agrees_with_the_engine_on_the_vectors(script, vector):
    played = script.play(vector["server_seed"], vector["client_seed"], vector["nonce"], vector["decks"])
    result = Dealer(vector["server_seed"], vector["client_seed"]).play(vector["nonce"], vector["decks"])
    assert script.side_bets(played) == engine_side_bets(result)


def test_the_command_line_prints_each_side_bet_after_the_round():
    args = [sys.executable, str(SCRIPT), "--server-seed", "0" * 64, "--client-seed", "client", "--nonce", "2193",
            "--decks", "1"]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert list(printed)[-2:] == ["outcome", "side_bets"]
    assert printed["player"]["cards"] == ["AS", "AD", "9C"] and printed["banker"]["cards"] == ["3D", "3H"]
    assert printed["side_bets"] == {
        "PLAYER_PAIR": "PAIR", "BANKER_PAIR": "PAIR", "EITHER_PAIR": "TWO_PAIRS", "PERFECT_PAIR": "NO_PERFECT_PAIR",
        "DRAGON_BONUS_PLAYER": "LOSS", "DRAGON_BONUS_BANKER": "WIN_BY_5", "BANKER_COMMISSION_FREE": "BANKER_WIN_ON_SIX",
    }
