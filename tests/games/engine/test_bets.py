"""Bet types as data: the registry, each rule's table, and the live path over dealt rounds."""

import secrets

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import (
    BET_TYPES,
    REGISTRY,
    BetKind,
    Deal,
    Dealer,
    bet_kind,
    bet_type_problem,
    deal_counts,
    event_of,
    events_of,
    observe,
    round_events,
    shoe_faces,
)
from games.engine.bets import PAIRED, SUITED_PAIR, UNPAIRED
from games.engine.payout import SETTLEMENT
from games.engine.rules import play_positions

from .side_bet_oracle import EVENT_OF
from .spec_oracle import RANKS, SUITS, spec_play

ISSUE_BET_TYPES = {
    "PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "BANKER_PAIR", "EITHER_PAIR", "PERFECT_PAIR",
    "DRAGON_BONUS_PLAYER", "DRAGON_BONUS_BANKER", "BANKER_COMMISSION_FREE",
}


def card(label: str, deck: int = 0) -> int:
    """The shoe index of a card written as a label ("KS", "10H") in deck ``deck``."""
    return deck * 52 + RANKS.index(label[:-1]) * 4 + SUITS.index(label[-1])


def deal(player_pair=UNPAIRED, banker_pair=UNPAIRED, player_two=0, banker_two=0, player_score=None,
         banker_score=None, player_cards=2, banker_cards=2) -> Deal:
    return Deal(player_pair, banker_pair, player_two, banker_two,
                player_two if player_score is None else player_score,
                banker_two if banker_score is None else banker_score, player_cards, banker_cards)


def test_the_registry_holds_the_issues_bet_types_each_with_its_events_and_a_default_paytable():
    assert set(REGISTRY) == ISSUE_BET_TYPES
    assert tuple(REGISTRY) == BET_TYPES
    for name, kind in REGISTRY.items():
        assert isinstance(kind, BetKind) and kind.name == name and kind.label and kind.description
        assert len(set(kind.events)) == len(kind.events)
        assert set(kind.default_paytable) <= set(kind.events)
        assert kind.push_events <= set(kind.default_paytable)
        assert any(event not in kind.push_events for event in kind.default_paytable)
    assert bet_kind("TIE") is REGISTRY["TIE"]
    with pytest.raises(KeyError, match="NOPE"):
        bet_kind("NOPE")
    assert bet_type_problem("DRAGON_BONUS_BANKER") is None
    for wrong in ("NOPE", "tie", None, 3):
        assert bet_type_problem(wrong).startswith("must be one of PLAYER, BANKER, TIE, PLAYER_PAIR")


@pytest.mark.parametrize("name", ["PLAYER", "BANKER", "TIE"])
def test_the_main_bets_settle_as_the_seeds_settlement_table(name):
    kind = REGISTRY[name]
    for outcome, settled in SETTLEMENT[name].items():
        pays = outcome in kind.default_paytable
        assert settled == ("PUSH" if outcome in kind.push_events else "WIN" if pays else "LOSE")
        assert kind.rule(deal(player_two=7 if outcome == "PLAYER" else 5,
                              banker_two=7 if outcome == "BANKER" else 5)) == outcome


# ---- Each rule's table ------------------------------------------------------------------------

@pytest.mark.parametrize(("player_pair", "banker_pair", "events"), [
    #  Player     Banker      PLAYER_PAIR, BANKER_PAIR, EITHER_PAIR, PERFECT_PAIR
    (UNPAIRED, UNPAIRED, ("NO_PAIR", "NO_PAIR", "NO_PAIR", "NO_PERFECT_PAIR")),
    (PAIRED, UNPAIRED, ("PAIR", "NO_PAIR", "ONE_PAIR", "NO_PERFECT_PAIR")),
    (UNPAIRED, PAIRED, ("NO_PAIR", "PAIR", "ONE_PAIR", "NO_PERFECT_PAIR")),
    (PAIRED, PAIRED, ("PAIR", "PAIR", "TWO_PAIRS", "NO_PERFECT_PAIR")),
    (SUITED_PAIR, UNPAIRED, ("PAIR", "NO_PAIR", "ONE_PAIR", "ONE_PERFECT_PAIR")),
    (PAIRED, SUITED_PAIR, ("PAIR", "PAIR", "TWO_PAIRS", "ONE_PERFECT_PAIR")),
    (SUITED_PAIR, SUITED_PAIR, ("PAIR", "PAIR", "TWO_PAIRS", "TWO_PERFECT_PAIRS")),
])
def test_pair_rules(player_pair, banker_pair, events):
    dealt = deal(player_pair, banker_pair)
    names = ("PLAYER_PAIR", "BANKER_PAIR", "EITHER_PAIR", "PERFECT_PAIR")
    assert tuple(REGISTRY[name].rule(dealt) for name in names) == events


@pytest.mark.parametrize(("player_two", "banker_two", "player_score", "banker_score", "player_event", "banker_event"), [
    (9, 0, 9, 0, "NATURAL_WIN", "LOSS"),          # a natural win by 9 pays as a natural, not 30:1
    (8, 9, 8, 9, "LOSS", "NATURAL_WIN"),
    (8, 8, 8, 8, "NATURAL_TIE", "NATURAL_TIE"),   # pushes
    (5, 4, 9, 0, "WIN_BY_9", "LOSS"),
    (6, 3, 6, 2, "WIN_BY_4", "LOSS"),
    (6, 3, 6, 6, "TIE", "TIE"),                    # a tie without naturals loses
    (3, 7, 4, 7, "LOSS", "WIN_BY_3"),
    (0, 0, 1, 8, "LOSS", "WIN_BY_7"),
])
def test_dragon_bonus_rule(player_two, banker_two, player_score, banker_score, player_event, banker_event):
    dealt = deal(player_two=player_two, banker_two=banker_two, player_score=player_score, banker_score=banker_score,
                 player_cards=2 if player_score == player_two else 3,
                 banker_cards=2 if banker_score == banker_two else 3)
    assert REGISTRY["DRAGON_BONUS_PLAYER"].rule(dealt) == player_event
    assert REGISTRY["DRAGON_BONUS_BANKER"].rule(dealt) == banker_event


@pytest.mark.parametrize(("player_score", "banker_score", "event"), [
    (5, 6, "BANKER_WIN_ON_SIX"), (2, 7, "BANKER_WIN"), (6, 6, "TIE"), (7, 6, "PLAYER_WIN"), (0, 9, "BANKER_WIN"),
])
def test_commission_free_banker_rule(player_score, banker_score, event):
    dealt = deal(player_two=player_score, banker_two=banker_score)
    assert REGISTRY["BANKER_COMMISSION_FREE"].rule(dealt) == event


# ---- The live path ------------------------------------------------------------------------------

def test_observe_reads_suits_ranks_scores_and_cards():
    # Player K♠ K♠ (two decks): a suited pair scoring 0; Banker 5♦ 5♣: a pair scoring 0.
    cards = [card("KS"), card("5D"), card("KS", 3), card("5C"), card("7H"), card("2S")]
    result = play_positions(*cards)
    assert observe(result) == Deal(SUITED_PAIR, PAIRED, 0, 0, 7, 2, 3, 3)
    events = round_events(result)
    assert events["PERFECT_PAIR"] == "ONE_PERFECT_PAIR"
    assert events["EITHER_PAIR"] == "TWO_PAIRS"
    assert events["DRAGON_BONUS_PLAYER"] == "WIN_BY_5"
    assert event_of("BANKER_PAIR", result) == "PAIR"


def test_pair_kinds_and_scores_tell_how_many_cards_each_hand_took():
    """The live path keys a round by pair kinds and scores alone: no two deals differ only in cards."""
    seen = {}
    for dealt in deal_counts(shoe_faces(8))[0]:
        key = dealt[:6]
        assert seen.setdefault(key, dealt[6:]) == dealt[6:]
    assert len(seen) > 10_000


def test_round_events_are_shared_and_read_only():
    result = play_positions(card("9H"), card("QS"), card("10C"), card("JD"), card("2H"), card("3H"))
    first, again = round_events(result), round_events(result)
    assert first is again and list(first) == list(REGISTRY)
    with pytest.raises(TypeError):
        first["TIE"] = "PLAYER"


def test_events_of_takes_any_bet_types():
    dragon_7 = BetKind("DRAGON_7", "Dragon 7", lambda d: "WIN" if d.banker_cards == 3 and d.banker_score == 7
                       and d.outcome == "BANKER" else "LOSS", ("WIN", "LOSS"), {"WIN": 41})
    assert events_of(deal(player_two=4, banker_two=5, player_score=6, banker_score=7, player_cards=3, banker_cards=3),
                     [dragon_7]) == {"DRAGON_7": "WIN"}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([f"{r}{s}" for r in RANKS for s in SUITS]), min_size=6, max_size=6),
       st.lists(st.integers(0, 7), min_size=6, max_size=6))
def test_every_rule_agrees_with_the_literal_oracle_on_any_cards(labels, decks):
    cards = [card(label, deck) for label, deck in zip(labels, decks, strict=True)]
    expected = spec_play(cards)
    events = round_events(play_positions(*cards))
    assert events == {name: EVENT_OF[name](expected) for name in REGISTRY}


def test_every_rule_agrees_with_the_oracle_on_dealt_rounds():
    dealer = Dealer(secrets.token_hex(32), "side-bets")
    for nonce in range(3000):
        result = dealer.play(nonce, 8)
        expected = spec_play(list(result.card_indices) + [0] * (6 - len(result.card_indices)))
        assert round_events(result) == {name: EVENT_OF[name](expected) for name in REGISTRY}
