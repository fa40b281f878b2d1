"""Why a bet won or lost (games/engine/outcomes.py): its event on the deal, as settlement settles it,
and the text the pages show; for every registered bet type, with no per-type code."""

import random
from decimal import Decimal

import pytest

from games.engine import (
    MAIN_BET_TYPES,
    REGISTRY,
    bet_outcome,
    bet_settlement,
    dealt_event,
    default_paytables,
    event_label,
    multiplier_text,
    paytable_as_json,
    paytable_lines,
    play_round,
    round_events,
)
from games.engine.payout import LOSE, PUSH, WIN

# A Player pair of eights (6) against a natural 9 of the Banker.
CARDS, PLAYER, BANKER = ["8H", "9S", "8D", "KC"], ["8H", "8D"], ["9S", "KC"]


@pytest.mark.parametrize("event, label", [
    ("PAIR", "Pair"), ("NO_PAIR", "No pair"), ("WIN_BY_5", "Win by 5"), ("NATURAL_TIE", "Natural tie"),
    ("BANKER_WIN_ON_SIX", "Banker win on six"), ("TWO_PERFECT_PAIRS", "Two perfect pairs"), ("TIE", "Tie"),
])
def test_an_event_reads_as_words(event, label):
    assert event_label(event) == label


@pytest.mark.parametrize("multiplier, text", [
    (Decimal("2.0000"), "× 2"), (Decimal("1.9500"), "× 1.95"), (Decimal("100"), "× 100"), ("12", "× 12"),
    (Decimal("1000.0000"), "× 1000"), (Decimal("1.0001"), "× 1.0001"),
])
def test_a_multiplier_drops_the_columns_trailing_zeros(multiplier, text):
    assert multiplier_text(multiplier) == text


def test_no_event_before_the_deal():
    assert dealt_event("PLAYER_PAIR", [], [], []) is None
    assert bet_outcome("PLAYER_PAIR", Decimal("12"), {"PAIR": "12"}, [], [], []) is None


def test_a_side_bet_shows_its_event_the_multiplier_paid_and_its_paytable():
    paytable = {"WIN_BY_9": "31", "NATURAL_TIE": "1", "NATURAL_WIN": "2"}  # as JSONB gives it back

    outcome = bet_outcome("DRAGON_BONUS_BANKER", Decimal("31"), paytable, CARDS, PLAYER, BANKER)

    assert (outcome.event, outcome.settlement, outcome.multiplier) == ("NATURAL_WIN", WIN, Decimal("2"))
    assert (outcome.event_label, outcome.paid) == ("Natural win", "× 2")
    assert outcome.paytable_text == "Natural win × 2 · Win by 9 × 31 · Natural tie push · otherwise lost"
    assert paytable_lines("DRAGON_BONUS_BANKER", paytable) == [
        ("NATURAL_WIN", "Natural win", "× 2"), ("WIN_BY_9", "Win by 9", "× 31"), ("NATURAL_TIE", "Natural tie", "push")]
    lost = bet_outcome("DRAGON_BONUS_PLAYER", Decimal("31"), paytable, CARDS, PLAYER, BANKER)
    assert (lost.event, lost.settlement, lost.multiplier, lost.paid) == ("LOSS", LOSE, Decimal(0), "lost")


def test_a_main_bet_settles_on_its_multiplier_with_the_tie_pushing():
    banker = bet_outcome("BANKER", Decimal("1.9500"), None, CARDS, PLAYER, BANKER)
    assert (banker.event_label, banker.paid, banker.paytable_text) == (
        "Banker", "× 1.95", "Banker × 1.95 · Tie push · otherwise lost")
    tie = ["9H", "9S", "KD", "QC"]
    push = bet_outcome("PLAYER", Decimal("2.0000"), None, tie, ["9H", "KD"], ["9S", "QC"])
    assert (push.event, push.settlement, push.multiplier, push.paid) == ("TIE", PUSH, Decimal(1), "push")


def test_every_bet_type_is_shown_as_settlement_settles_it():
    """On many deals, for every registered bet type at its default paytable: the event is the round's
    and the multiplier shown is what settlement returns per unit staked."""
    rng = random.Random(4)
    stake = Decimal("100.00")
    paytables = default_paytables()
    for nonce in range(300):
        dealt = play_round(f"{rng.getrandbits(256):064x}", "client", nonce, 8)
        labels = dealt.as_dict()
        cards, player, banker = labels["cards"], labels["player"]["cards"], labels["banker"]["cards"]
        events = round_events(dealt)
        for name in REGISTRY:
            # A side bet carries its paytable as JSON; a main bet none, its multiplier the paying one.
            stored = None if name in MAIN_BET_TYPES else paytable_as_json(paytables[name])
            multiplier = max(paytables[name].values())
            outcome = bet_outcome(name, multiplier, stored, cards, player, banker)
            settled, returned = bet_settlement(name, stake, multiplier, stored, events[name])
            assert outcome.event == events[name] == dealt_event(name, cards, player, banker)
            assert outcome.settlement == settled
            assert stake * outcome.multiplier == returned
