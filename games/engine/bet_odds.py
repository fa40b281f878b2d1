"""Exact odds of every bet type: integer counts of deals by the observations the bet rules read.

The convention is that of exact_odds and of the published tables: every round is an ordered draw of
six cards from the shoe (positions 1–6), a round that deals fewer counting once for every way its
unused positions could be filled, so every count is out of N·(N−1)·…·(N−5) deals. The rules see a
round as a ``Deal`` (bets.py), so counting deals by Deal gives every bet type's events at once:

1. The Player's first two cards, by face (rank and suit) with their multiplicities: each ordered
   pair is one of three kinds (unpaired, paired, suited pair) on two values.
2. The Banker's first two cards from what is left, counted per kind and values from the cards left
   of each rank and the sums of their squares: an identical card c·(c−1) ways per face, a pair of
   one rank R² − Σc², and so on. What is left depends only on the ranks and multiplicities the
   Player took, so each such case is computed once.
3. The third cards by value alone, as in exact_odds: which ranks and suits went first changes no
   value count of what is left, only which values did.

Any shoe of faces with multiplicities can be counted (``deal_counts``): a shoe of D decks, or the
small shoes the tests count card by card.
"""

from collections import defaultdict
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

from .bets import PAIRED, REGISTRY, SUITED_PAIR, UNPAIRED, BetKind, Deal, events_of
from .cards import CARDS_PER_DECK, VALUES
from .odds import _falling
from .paytables import default_paytables, expected_return, settlement_of
from .rules import BANKER_DRAWS_WHEN_PLAYER_STOOD, NATURAL_SCORES, PLAYER_DRAWS, banker_draws_after_player

RANK_COUNT = CARDS_PER_DECK // 4


def _rank(face: int) -> int:
    return face // 4


# The ranks of each value: value 0 has four (10 J Q K), the others one.
_RANKS_OF_VALUE = tuple(tuple(r for r in range(RANK_COUNT) if VALUES[r * 4] == v) for v in range(10))


def shoe_faces(decks: int) -> tuple:
    """The multiplicity of each of the 52 faces in a shoe of ``decks`` decks."""
    return (decks,) * CARDS_PER_DECK


def _two_card_ways(by_rank: list, squares: list, by_value: list) -> dict:
    """Ordered ways to take two cards from a shoe, by (pair kind, lower value, higher value), from
    the cards of each rank, the sums of their multiplicities' squares and the cards of each value."""
    ways = {}
    for v, ranks in enumerate(_RANKS_OF_VALUE):
        suited = sum(squares[r] - by_rank[r] for r in ranks)        # the same face twice
        paired = sum(by_rank[r] ** 2 - squares[r] for r in ranks)   # one rank, two faces
        unpaired = by_value[v] ** 2 - sum(by_rank[r] ** 2 for r in ranks)  # one value, two ranks
        for kind, count in ((SUITED_PAIR, suited), (PAIRED, paired), (UNPAIRED, unpaired)):
            if count:
                ways[(kind, v, v)] = count
        for w in range(v + 1, 10):
            if by_value[v] and by_value[w]:
                ways[(UNPAIRED, v, w)] = 2 * by_value[v] * by_value[w]
    return ways


def _first_four(faces: tuple) -> dict:
    """Ordered ways to deal positions 1–4: {(player values, banker values): {(player kind, banker
    kind): ways}}, values as (lower, higher)."""
    by_rank = [0] * RANK_COUNT
    squares = [0] * RANK_COUNT
    by_value = [0] * 10
    for face, count in enumerate(faces):
        by_rank[_rank(face)] += count
        squares[_rank(face)] += count * count
        by_value[VALUES[face]] += count
    # The Player's ordered pairs of faces, grouped by their kind and values and by what they change
    # for the Banker: the ranks taken and the multiplicity each face had when taken.
    player_groups = defaultdict(int)
    for f, count_f in enumerate(faces):
        if not count_f:
            continue
        for g, count_g in enumerate(faces):
            count_g -= f == g
            if count_g <= 0:
                continue
            kind = SUITED_PAIR if f == g else PAIRED if _rank(f) == _rank(g) else UNPAIRED
            values = tuple(sorted((VALUES[f], VALUES[g])))
            player_groups[(kind, values, _rank(f), count_f, _rank(g), count_g)] += count_f * count_g
    dealt = defaultdict(lambda: defaultdict(int))
    banker_cache = {}
    for (kind, values, rank_f, count_f, rank_g, count_g), ways in player_groups.items():
        key = (rank_f, count_f, rank_g, count_g)
        banker = banker_cache.get(key)
        if banker is None:
            left_rank, left_squares, left_value = by_rank.copy(), squares.copy(), by_value.copy()
            for rank, count in ((rank_f, count_f), (rank_g, count_g)):
                left_rank[rank] -= 1
                left_squares[rank] -= 2 * count - 1  # c² → (c − 1)²
                left_value[VALUES[rank * 4]] -= 1
            banker = banker_cache[key] = _two_card_ways(left_rank, left_squares, left_value)
        for (banker_kind, low, high), banker_ways in banker.items():
            dealt[(values, (low, high))][(kind, banker_kind)] += ways * banker_ways
    return dealt


def _third_cards(left: list, cards_left: int, player_two: int, banker_two: int):
    """(player final, banker final, player cards, banker cards, ways to fill positions 5 and 6),
    from the cards of each value left after the first four."""
    fill_two = cards_left * (cards_left - 1)
    if player_two in NATURAL_SCORES or banker_two in NATURAL_SCORES:
        yield player_two, banker_two, 2, 2, fill_two
    elif not PLAYER_DRAWS[player_two]:
        if BANKER_DRAWS_WHEN_PLAYER_STOOD[banker_two]:
            for w, count in enumerate(left):
                if count:
                    yield player_two, (banker_two + w) % 10, 2, 3, count * (cards_left - 1)
        else:
            yield player_two, banker_two, 2, 2, fill_two
    else:
        for v, count in enumerate(left):
            if not count:
                continue
            player_final = (player_two + v) % 10
            if banker_draws_after_player(banker_two, v):
                left[v] -= 1
                for w, count_w in enumerate(left):
                    if count_w:
                        yield player_final, (banker_two + w) % 10, 3, 3, count * count_w
                left[v] += 1
            else:
                yield player_final, banker_two, 3, 2, count * (cards_left - 1)


@lru_cache(maxsize=16)
def deal_counts(faces: tuple) -> tuple:
    """(ordered six-card deals of a shoe by Deal, their total N·(N−1)·…·(N−5)); ``faces`` is the
    multiplicity of each of the 52 faces (``shoe_faces``)."""
    if len(faces) != CARDS_PER_DECK or any(count < 0 for count in faces):
        raise ValueError("faces: one multiplicity, at least 0, for each of the 52 faces")
    total_cards = sum(faces)
    by_value = [0] * 10
    for face, count in enumerate(faces):
        by_value[VALUES[face]] += count
    counts = defaultdict(int)
    for ((p_low, p_high), (b_low, b_high)), by_kinds in _first_four(faces).items():
        left = by_value.copy()
        for v in (p_low, p_high, b_low, b_high):
            left[v] -= 1
        player_two = (p_low + p_high) % 10
        banker_two = (b_low + b_high) % 10
        for player_final, banker_final, player_cards, banker_cards, ways in _third_cards(
                left, total_cards - 4, player_two, banker_two):
            for (player_kind, banker_kind), first_ways in by_kinds.items():
                counts[Deal(player_kind, banker_kind, player_two, banker_two, player_final, banker_final,
                            player_cards, banker_cards)] += first_ways * ways
    total = _falling(total_cards, 6)
    assert sum(counts.values()) == total, "every ordered six-card deal is counted once"
    return dict(counts), total


class EventCounts(NamedTuple):
    """A bet type's events, each with its number of deals out of ``total``, in the order of its events."""

    kind: BetKind
    total: int
    counts: dict

    @property
    def bet_type(self) -> str:
        return self.kind.name

    def probability(self, event: str) -> Fraction:
        return Fraction(self.counts[event], self.total)

    def probabilities(self) -> dict:
        return {event: self.probability(event) for event in self.counts}


def event_counts_of_shoe(faces: tuple, kinds=None) -> dict:
    """{bet type name: EventCounts} for a shoe of faces, for the registered bet types or ``kinds``."""
    kinds = list(REGISTRY.values()) if kinds is None else list(kinds)
    deals, total = deal_counts(faces)
    counts = {kind.name: dict.fromkeys(kind.events, 0) for kind in kinds}
    for deal, ways in deals.items():
        for name, event in events_of(deal, kinds).items():
            counts[name][event] += ways
    return {kind.name: EventCounts(kind, total, counts[kind.name]) for kind in kinds}


@lru_cache(maxsize=8)
def bet_odds(decks: int) -> dict:
    """{bet type name: EventCounts} of every registered bet type for a shoe of ``decks`` decks."""
    return event_counts_of_shoe(shoe_faces(decks))


def bet_rtp(counts: EventCounts, paytable) -> Fraction:
    return expected_return(counts.kind, paytable, counts.probabilities())


def bet_odds_report(decks: int, paytables=None) -> dict:
    """Every bet type's events under its paytable (the defaults, or ``paytables`` by name), in the
    shape of ``manage.py odds --json``'s "bets": combinations (an integer out of ``deals``), the
    probability, the multiplier, the return (probability × multiplier) and the bet's RTP."""
    paytables = {**default_paytables(), **(paytables or {})}
    odds = bet_odds(decks)
    bets = {}
    for name, counts in odds.items():
        paytable = paytables[name]
        events = []
        for event, combinations in counts.counts.items():
            settled, multiplier = settlement_of(counts.kind, paytable, event)
            probability = counts.probability(event)
            events.append({
                "event": event,
                "settlement": settled,
                "multiplier": str(multiplier),
                "combinations": combinations,
                "probability": float(probability),
                "return": float(probability * Fraction(multiplier)),
            })
        rtp = bet_rtp(counts, paytable)
        bets[name] = {"events": events, "rtp": float(rtp), "house_edge": float(1 - rtp)}
    return {"decks": decks, "deals": next(iter(odds.values())).total, "bets": bets}
