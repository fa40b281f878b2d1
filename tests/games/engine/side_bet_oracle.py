"""The side bets' rules written a second time for the tests, without games.engine.

Literal and slow on purpose: each rule reads a round in the form of spec_oracle.spec_play (card
labels such as "10H", "KS"), and names its event as the registry does. The engine's rules, its live
path and its exact counts are checked against these.
"""

from .spec_oracle import VALUE_OF_RANK

DRAGON_PAYING_MARGINS = range(4, 10)


def rank(label: str) -> str:
    return label[:-1]


def two_card_score(cards) -> int:
    return sum(VALUE_OF_RANK[rank(label)] for label in cards[:2]) % 10


def is_pair(cards) -> bool:
    return rank(cards[0]) == rank(cards[1])


def is_perfect_pair(cards) -> bool:
    return cards[0] == cards[1]  # the same rank and the same suit


def dragon_bonus(round_: dict, hand: str) -> str:
    other = "banker" if hand == "player" else "player"
    own_cards, other_cards = round_[hand]["cards"], round_[other]["cards"]
    margin = round_[hand]["score"] - round_[other]["score"]
    own_natural = len(own_cards) == 2 and two_card_score(own_cards) >= 8
    both_natural = own_natural and len(other_cards) == 2 and two_card_score(other_cards) >= 8
    if margin > 0:
        return "NATURAL_WIN" if own_natural else f"WIN_BY_{margin}"
    if margin == 0:
        return "NATURAL_TIE" if both_natural else "TIE"
    return "LOSS"


def count_pairs(round_: dict, test) -> int:
    return sum(test(round_[hand]["cards"]) for hand in ("player", "banker"))


def commission_free(round_: dict) -> str:
    if round_["outcome"] == "BANKER":
        return "BANKER_WIN_ON_SIX" if round_["banker"]["score"] == 6 else "BANKER_WIN"
    return "PLAYER_WIN" if round_["outcome"] == "PLAYER" else "TIE"


EVENT_OF = {
    "PLAYER": lambda r: r["outcome"],
    "BANKER": lambda r: r["outcome"],
    "TIE": lambda r: r["outcome"],
    "PLAYER_PAIR": lambda r: "PAIR" if is_pair(r["player"]["cards"]) else "NO_PAIR",
    "BANKER_PAIR": lambda r: "PAIR" if is_pair(r["banker"]["cards"]) else "NO_PAIR",
    "EITHER_PAIR": lambda r: ("NO_PAIR", "ONE_PAIR", "TWO_PAIRS")[count_pairs(r, is_pair)],
    "PERFECT_PAIR": lambda r: ("NO_PERFECT_PAIR", "ONE_PERFECT_PAIR", "TWO_PERFECT_PAIRS")[
        count_pairs(r, is_perfect_pair)],
    "DRAGON_BONUS_PLAYER": lambda r: dragon_bonus(r, "player"),
    "DRAGON_BONUS_BANKER": lambda r: dragon_bonus(r, "banker"),
    "BANKER_COMMISSION_FREE": commission_free,
}
