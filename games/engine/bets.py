"""Bet types as data: each is a rule over a dealt round that yields the event its paytable pays on.

A rule reads the round through ``Deal``: how each hand's first two cards pair, the two-card and
final scores, and how many cards each hand took. Every bet type here is decided by these alone, and
the exact odds (``bet_odds``) count deals by the same observations, so a new bet type is one entry
in REGISTRY with its default paytable, and its exact odds and settlement need nothing else
(docs/game/side-bets.md shows one added). A bet that needs to see more of a round (the Player's
third card, say) first needs that observation added to ``Deal``, to ``observe``, to the live key
of ``round_events`` and to the count.

Paytables (``paytables.py``) map events to total-return multipliers, stake included: a paying
event's multiplier is at least 1.0, a push event's exactly 1.0, and an event it does not list loses.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import NamedTuple

from .cards import CARDS_PER_DECK, MAX_DECKS
from .rules import _SHOE_VALUES, NATURAL_SCORES, Outcome, RoundResult, winner

# How a hand's first two cards pair (cards.py: index k of a deck is rank k // 4, suit k % 4).
UNPAIRED = 0
PAIRED = 1       # the same rank in two suits
SUITED_PAIR = 2  # the same rank and suit: two identical cards, from two decks of the shoe


class Deal(NamedTuple):
    """A dealt round as the bet rules see it."""

    player_pair: int   # UNPAIRED, PAIRED or SUITED_PAIR: the Player's first two cards
    banker_pair: int
    player_two: int    # the two-card scores
    banker_two: int
    player_score: int  # the final scores
    banker_score: int
    player_cards: int  # 2 or 3
    banker_cards: int

    @property
    def outcome(self) -> str:
        return winner(self.player_score, self.banker_score)

    @property
    def player_natural(self) -> bool:
        return self.player_two in NATURAL_SCORES

    @property
    def banker_natural(self) -> bool:
        return self.banker_two in NATURAL_SCORES


@dataclass(frozen=True)
class BetKind:
    """One bet type: its rule, every event the rule can yield, the events on which the stake comes
    back whatever the paytable (pushes), and the paytable a game uses unless configured otherwise."""

    name: str
    label: str
    rule: Callable[[Deal], str]
    events: tuple
    default_paytable: MappingProxyType  # given as {event: multiplier}, kept read-only with Decimals
    push_events: frozenset = field(default_factory=frozenset)
    description: str = ""

    def __post_init__(self):
        paytable = {event: Decimal(multiplier) for event, multiplier in self.default_paytable.items()}
        object.__setattr__(self, "events", tuple(self.events))
        object.__setattr__(self, "default_paytable", MappingProxyType(paytable))
        object.__setattr__(self, "push_events", frozenset(self.push_events))


# --- The rules, one table each -------------------------------------------------------------------

def main_outcome(deal: Deal) -> str:
    """PLAYER, BANKER or TIE: the event of the three main bets (baccarat-rules.md)."""
    return deal.outcome


def player_pair(deal: Deal) -> str:
    return "NO_PAIR" if deal.player_pair == UNPAIRED else "PAIR"


def banker_pair(deal: Deal) -> str:
    return "NO_PAIR" if deal.banker_pair == UNPAIRED else "PAIR"


# By how many hands are paired: [Player paired][Banker paired] → event.
EITHER_PAIR_EVENTS = {False: {False: "NO_PAIR", True: "ONE_PAIR"}, True: {False: "ONE_PAIR", True: "TWO_PAIRS"}}


def either_pair(deal: Deal) -> str:
    return EITHER_PAIR_EVENTS[deal.player_pair != UNPAIRED][deal.banker_pair != UNPAIRED]


PERFECT_PAIR_EVENTS = {
    False: {False: "NO_PERFECT_PAIR", True: "ONE_PERFECT_PAIR"},
    True: {False: "ONE_PERFECT_PAIR", True: "TWO_PERFECT_PAIRS"},
}


def perfect_pair(deal: Deal) -> str:
    return PERFECT_PAIR_EVENTS[deal.player_pair == SUITED_PAIR][deal.banker_pair == SUITED_PAIR]


# Dragon Bonus on a hand, by whether that hand is a natural and by its final margin over the other
# (negative: it lost). A natural win pays whatever the margin; a tie is a natural tie only when both
# hands are naturals (a natural against a non-natural can never tie).
DRAGON_WIN_BY = {margin: f"WIN_BY_{margin}" for margin in range(1, 10)}
DRAGON_BONUS_EVENTS = ("NATURAL_WIN", *(DRAGON_WIN_BY[m] for m in range(9, 0, -1)), "NATURAL_TIE", "TIE", "LOSS")


def _dragon_bonus(natural: bool, margin: int) -> str:
    if margin < 0:
        return "LOSS"
    if margin == 0:
        return "NATURAL_TIE" if natural else "TIE"
    return "NATURAL_WIN" if natural else DRAGON_WIN_BY[margin]


def dragon_bonus_player(deal: Deal) -> str:
    return _dragon_bonus(deal.player_natural, deal.player_score - deal.banker_score)


def dragon_bonus_banker(deal: Deal) -> str:
    return _dragon_bonus(deal.banker_natural, deal.banker_score - deal.player_score)


# Commission-free Banker: by the outcome, and a Banker win told apart when its final score is 6.
COMMISSION_FREE_EVENTS = {Outcome.PLAYER: "PLAYER_WIN", Outcome.BANKER: "BANKER_WIN", Outcome.TIE: "TIE"}


def banker_commission_free(deal: Deal) -> str:
    if deal.outcome == Outcome.BANKER and deal.banker_score == 6:
        return "BANKER_WIN_ON_SIX"
    return COMMISSION_FREE_EVENTS[deal.outcome]


# --- The registry ----------------------------------------------------------------------------------

MAIN_EVENTS = Outcome.ALL
DRAGON_BONUS_PAYTABLE = {  # 1:1 on a natural win, 30:1 … 1:1 on a non-natural win by 9 … 4
    "NATURAL_WIN": "2", "WIN_BY_9": "31", "WIN_BY_8": "11", "WIN_BY_7": "7", "WIN_BY_6": "5",
    "WIN_BY_5": "3", "WIN_BY_4": "2", "NATURAL_TIE": "1",
}

REGISTRY = {kind.name: kind for kind in (
    #       name, label, rule, events, default paytable (total return, stake included), push events
    BetKind("PLAYER", "Player", main_outcome, MAIN_EVENTS, {"PLAYER": "2.0", "TIE": "1"}, {"TIE"},
            "The Player's final score is higher; a tie pushes."),
    BetKind("BANKER", "Banker", main_outcome, MAIN_EVENTS, {"BANKER": "1.95", "TIE": "1"}, {"TIE"},
            "The Banker's final score is higher; a tie pushes."),
    BetKind("TIE", "Tie", main_outcome, MAIN_EVENTS, {"TIE": "9.0"}, (),
            "Equal final scores."),
    BetKind("PLAYER_PAIR", "Player pair", player_pair, ("PAIR", "NO_PAIR"), {"PAIR": "12"}, (),
            "The Player's first two cards are of one rank (11 to 1)."),
    BetKind("BANKER_PAIR", "Banker pair", banker_pair, ("PAIR", "NO_PAIR"), {"PAIR": "12"}, (),
            "The Banker's first two cards are of one rank (11 to 1)."),
    BetKind("EITHER_PAIR", "Either pair", either_pair, ("TWO_PAIRS", "ONE_PAIR", "NO_PAIR"),
            {"TWO_PAIRS": "6", "ONE_PAIR": "6"}, (),
            "The first two cards of the Player, the Banker or both are of one rank (5 to 1)."),
    BetKind("PERFECT_PAIR", "Perfect pair", perfect_pair, ("TWO_PERFECT_PAIRS", "ONE_PERFECT_PAIR", "NO_PERFECT_PAIR"),
            {"TWO_PERFECT_PAIRS": "26", "ONE_PERFECT_PAIR": "26"}, (),
            "The first two cards of the Player, the Banker or both are identical, rank and suit (25 to 1)."),
    BetKind("DRAGON_BONUS_PLAYER", "Dragon Bonus Player", dragon_bonus_player, DRAGON_BONUS_EVENTS,
            DRAGON_BONUS_PAYTABLE, {"NATURAL_TIE"},
            "The Player wins with a natural, or without one by 4 points or more; a natural tie pushes."),
    BetKind("DRAGON_BONUS_BANKER", "Dragon Bonus Banker", dragon_bonus_banker, DRAGON_BONUS_EVENTS,
            DRAGON_BONUS_PAYTABLE, {"NATURAL_TIE"},
            "The Banker wins with a natural, or without one by 4 points or more; a natural tie pushes."),
    BetKind("BANKER_COMMISSION_FREE", "Banker, commission free", banker_commission_free,
            ("BANKER_WIN", "BANKER_WIN_ON_SIX", "PLAYER_WIN", "TIE"),
            {"BANKER_WIN": "2", "BANKER_WIN_ON_SIX": "1.5", "TIE": "1"}, {"TIE"},
            "The Banker wins, paid even money, half on a final score of 6; a tie pushes."),
)}
BET_TYPES = tuple(REGISTRY)
# The three main bets are priced by one multiplier each, a game's columns; every other bet type is a
# side bet, which a game offers by configuring its paytable.
MAIN_BET_TYPES = ("PLAYER", "BANKER", "TIE")
SIDE_BET_TYPES = tuple(name for name in REGISTRY if name not in MAIN_BET_TYPES)


def bet_kind(name: str) -> BetKind:
    """The registered bet type called ``name``; KeyError names it when there is none."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no bet type {name!r}") from None


def bet_type_problem(name) -> str | None:
    """Why ``name`` is not a registered bet type (for a 400 naming the field), or None when it is."""
    if isinstance(name, str) and name in REGISTRY:
        return None
    return f"must be one of {', '.join(REGISTRY)}"


# --- The live path: one round, every bet type ------------------------------------------------------

# For a card index of the largest shoe: its face (0–51) and its face times 52, so that the pair kind
# of two cards is one look-up in a table of the 52 × 52 ordered pairs of faces.
_FACE = tuple(range(CARDS_PER_DECK)) * MAX_DECKS
_FACE_ROW = tuple(face * CARDS_PER_DECK for face in _FACE)
_PAIR_KIND = tuple(
    SUITED_PAIR if a == b else PAIRED if a // 4 == b // 4 else UNPAIRED
    for a in range(CARDS_PER_DECK) for b in range(CARDS_PER_DECK)
)
_new_deal = tuple.__new__


def observe(result: RoundResult) -> Deal:
    """What the bet rules read of a dealt round."""
    player = result.player_indices
    banker = result.banker_indices
    p1, p2 = player[0], player[1]
    b1, b2 = banker[0], banker[1]
    value = _SHOE_VALUES
    return _new_deal(Deal, (
        _PAIR_KIND[_FACE_ROW[p1] + _FACE[p2]], _PAIR_KIND[_FACE_ROW[b1] + _FACE[b2]],
        (value[p1] + value[p2]) % 10, (value[b1] + value[b2]) % 10,
        result.player_score, result.banker_score, len(player), len(banker),
    ))


def events_of(deal: Deal, kinds=None) -> MappingProxyType:
    """The event of every registered bet type (or of ``kinds``) for one deal, by bet type name."""
    kinds = REGISTRY.values() if kinds is None else kinds
    return MappingProxyType({kind.name: kind.rule(deal) for kind in kinds})


# The live path's key of a deal, one integer: each hand's first two faces (their pair kind and
# two-card score) and the final scores. That is the whole Deal: the two-card scores and the Player's
# final one tell who drew. Each key's events are computed once, on first sight, from ``observe``.
_TWO_CARD_CODES = tuple(
    _PAIR_KIND[a * CARDS_PER_DECK + b] * 10 + (_SHOE_VALUES[a] + _SHOE_VALUES[b]) % 10
    for a in range(CARDS_PER_DECK) for b in range(CARDS_PER_DECK)
)
# Thirty distinct int objects each, shared by every entry: the tables stay in the CPU's cache.
_PLAYER_STRIDES = tuple(code * 3000 for code in range(30))
_BANKER_STRIDES = tuple(code * 100 for code in range(30))


def _key_rows(strides: tuple) -> tuple:
    """[first card][second card] → that hand's part of the key, by card index of the largest shoe:
    two subscripts a hand. One row per face (52), shared by the decks."""
    shoe = range(CARDS_PER_DECK * MAX_DECKS)
    rows = tuple(tuple(strides[_TWO_CARD_CODES[_FACE_ROW[a] + _FACE[b]]] for b in shoe) for a in range(CARDS_PER_DECK))
    return tuple(rows[face] for face in _FACE)


_PLAYER_KEY = _key_rows(_PLAYER_STRIDES)
_BANKER_KEY = _key_rows(_BANKER_STRIDES)
_EVENTS_BY_KEY = [None] * 30 * 3000  # a list: faster than a dict for a loop that also runs HMAC
# Each distinct set of events once: keys whose deals differ only in what no rule tells apart share
# one mapping (about 200 of them against thousands of keys), which stays in the CPU's cache.
_DISTINCT_EVENTS = {}


def round_events(result: RoundResult) -> MappingProxyType:
    """Every registered bet type's event for a dealt round, by name (shared, read-only).

    Runs for every round dealt, so it reads the round once and looks its events up by one integer."""
    _cards, player, banker, player_score, banker_score, _natural, _outcome = result
    key = _PLAYER_KEY[player[0]][player[1]] + _BANKER_KEY[banker[0]][banker[1]] + player_score * 10 + banker_score
    events = _EVENTS_BY_KEY[key]
    if events is None:
        events = events_of(observe(result))
        events = _EVENTS_BY_KEY[key] = _DISTINCT_EVENTS.setdefault(tuple(events.items()), events)
    return events


def event_of(bet_type: str, result: RoundResult) -> str:
    return round_events(result)[bet_kind(bet_type).name]
