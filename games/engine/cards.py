"""Cards of the shoe, their baccarat values and hand scores.

A card is an index into the uncut shoe: 0 … 52·D − 1, deck after deck. Inside a deck, index k is
rank ``k // 4`` in the order below and suit ``k % 4`` in the order ♦ ♥ ♠ ♣ (provably-fair.md).
"""

RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUITS = ("D", "H", "S", "C")
RED_SUITS = frozenset({"D", "H"})  # diamonds and hearts are printed red
SUIT_SYMBOLS = {"D": "♦", "H": "♥", "S": "♠", "C": "♣"}

# Card valuation: 2–9 face value, 10 J Q K count 0, A counts 1.
RANK_VALUES = {
    "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9,
    "10": 0, "J": 0, "Q": 0, "K": 0,
    "A": 1,
}

CARDS_PER_DECK = 52
MIN_DECKS = 1
MAX_DECKS = 8

# Per index inside one deck, precomputed because the deal looks them up on every card.
LABELS = tuple(rank + suit for rank in RANKS for suit in SUITS)
VALUES = tuple(RANK_VALUES[rank] for rank in RANKS for _suit in SUITS)
_LABEL_TO_INDEX = {label: index for index, label in enumerate(LABELS)}


def card_label(card_index: int) -> str:
    """`2D`, `10H`, `JS`, `AC`: rank then suit letter, the form of the test vectors."""
    return LABELS[card_index % CARDS_PER_DECK]


def card_value(card_index: int) -> int:
    return VALUES[card_index % CARDS_PER_DECK]


def label_value(label: str) -> int:
    """The baccarat value of a card written as a label (`KH` → 0)."""
    return VALUES[_LABEL_TO_INDEX[label]]


def label_symbol(label: str) -> str:
    """`10H` → `10♥`, for pages that show cards as cards."""
    return label[:-1] + SUIT_SYMBOLS[label[-1]]


def hand_score(values) -> int:
    """Score = (sum of card values) mod 10."""
    return sum(values) % 10


def is_red(label: str) -> bool:
    return label[-1] in RED_SUITS
