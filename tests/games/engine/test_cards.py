"""Cards, values and scores: the tables of baccarat-rules.md and the shoe order of provably-fair.md."""

import pytest

from games.engine import card_label, card_value, hand_score, label_symbol, label_value
from games.engine.cards import CARDS_PER_DECK, MAX_DECKS

# "Cards and scores": every rank, its value.
RANK_VALUES = [
    ("A", 1), ("2", 2), ("3", 3), ("4", 4), ("5", 5), ("6", 6), ("7", 7), ("8", 8), ("9", 9),
    ("10", 0), ("J", 0), ("Q", 0), ("K", 0),
]
# "The shoe before the cut": rank k // 4 in the order 2 … A, suit k % 4 in the order D H S C.
SHOE_RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
SHOE_SUITS = ["D", "H", "S", "C"]


@pytest.mark.parametrize(("rank", "value"), RANK_VALUES, ids=[rank for rank, _ in RANK_VALUES])
def test_every_rank_has_the_value_of_the_table_in_every_suit(rank, value):
    for suit in SHOE_SUITS:
        assert label_value(rank + suit) == value
    first_index = SHOE_RANKS.index(rank) * 4
    for deck in range(MAX_DECKS):
        for suit_index in range(4):
            assert card_value(deck * CARDS_PER_DECK + first_index + suit_index) == value


@pytest.mark.parametrize(("values", "score"), [
    ((label_value("KH"), label_value("7S")), 7),   # K♥ + 7♠ → 0 + 7 = 7
    ((label_value("8D"), label_value("7C")), 5),   # 8♦ + 7♣ → 8 + 7 = 15 → 5
    ((label_value("QC"), label_value("JH"), label_value("5S")), 5),  # Q♣ + J♥ + 5♠ → 5
], ids=["K+7=7", "8+7=5", "Q+J+5=5"])
def test_score_examples_of_the_specification(values, score):
    assert hand_score(values) == score


@pytest.mark.parametrize(("index", "label"), [
    (0, "2D"), (1, "2H"), (4, "3D"), (48, "AD"), (51, "AC"), (52, "2D"),
    (32, "10D"), (35, "10C"), (36, "JD"), (40, "QD"), (44, "KD"), (415, "AC"),
])
def test_shoe_index_to_label_as_provably_fair_md_states(index, label):
    assert card_label(index) == label


def test_every_index_of_an_eight_deck_shoe_has_rank_and_suit_from_its_position():
    for index in range(CARDS_PER_DECK * MAX_DECKS):
        k = index % CARDS_PER_DECK
        assert card_label(index) == SHOE_RANKS[k // 4] + SHOE_SUITS[k % 4]


@pytest.mark.parametrize(("label", "shown"), [("10H", "10♥"), ("AD", "A♦"), ("JS", "J♠"), ("2C", "2♣")])
def test_label_symbol_shows_the_suit_as_a_symbol(label, shown):
    assert label_symbol(label) == shown


def test_hand_score_is_the_last_digit_of_the_sum():
    for a in range(10):
        for b in range(10):
            assert hand_score([a, b]) == (a + b) % 10
            assert 0 <= hand_score([a, b, 9]) <= 9
