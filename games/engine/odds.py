"""Exact odds of a shoe of D decks dealt without replacement: integer counts, never simulation.

Every round is counted as an ordered draw of six cards from the shoe (positions 1–6); a round that
deals fewer counts once for every way its unused positions could be filled, so all weights share
the denominator N·(N−1)·…·(N−5) and the three probabilities are exact fractions summing to 1.
The enumeration runs over card *values* (0–9) with their multiplicities, which is exact because the
rules only ever look at values.
"""

from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

from .cards import CARDS_PER_DECK, RANK_VALUES, SUITS
from .payout import PUSH, SETTLEMENT, WIN, BetType, Multipliers
from .rules import (
    BANKER_DRAWS_WHEN_PLAYER_STOOD,
    NATURAL_SCORES,
    PLAYER_DRAWS,
    Outcome,
    banker_draws_after_player,
    winner,
)


class Odds(NamedTuple):
    decks: int
    player: Fraction
    banker: Fraction
    tie: Fraction

    def of(self, outcome: str) -> Fraction:
        return {Outcome.PLAYER: self.player, Outcome.BANKER: self.banker, Outcome.TIE: self.tie}[outcome]


def _value_counts(decks: int) -> list:
    counts = [0] * 10
    for value in RANK_VALUES.values():
        counts[value] += len(SUITS) * decks
    return counts


def _falling(n: int, k: int) -> int:
    product = 1
    for i in range(k):
        product *= n - i
    return product


# winner() of every pair of final scores, as an index into Outcome.ALL, looked up in the loops.
_WINNER = tuple(tuple(Outcome.ALL.index(winner(p, b)) for b in range(10)) for p in range(10))
# The same, by the value (0–9) of the Banker's third card: [player final][banker two-card][value].
_WINNER_AFTER_BANKER_THIRD = tuple(
    tuple(tuple(_WINNER[p][(b + w) % 10] for w in range(10)) for b in range(10)) for p in range(10)
)


@lru_cache(maxsize=8)
def exact_odds(decks: int) -> Odds:
    counts = _value_counts(decks)
    total = CARDS_PER_DECK * decks
    wins = [0] * len(Outcome.ALL)  # ordered six-card deals, by outcome in the order of Outcome.ALL
    # Ways to fill the unused positions after 4 or 5 cards, so every round counts as six cards.
    fill_after_four = (total - 4) * (total - 5)
    fill_after_five = total - 5
    # For a Player's final score and a Banker's two-card score: the cards of the full shoe that
    # would give each outcome as the Banker's third card.
    shoe_tally = [[[0] * len(Outcome.ALL) for _b in range(10)] for _p in range(10)]
    for p in range(10):
        for b in range(10):
            for w, outcome in enumerate(_WINNER_AFTER_BANKER_THIRD[p][b]):
                shoe_tally[p][b][outcome] += counts[w]
    pairs = [(a, b) for a in range(10) for b in range(a, 10)]
    for pa, pb in pairs:
        for ba, bb in pairs:
            # Ordered ways to deal these values at positions 1–4 (each hand's two cards in either
            # order): the cards of each value still left, multiplied as the four are taken out.
            left = counts.copy()
            ways = left[pa]
            left[pa] -= 1
            ways *= left[pb]
            left[pb] -= 1
            ways *= left[ba]
            left[ba] -= 1
            ways *= left[bb]
            left[bb] -= 1
            if pa != pb:
                ways *= 2
            if ba != bb:
                ways *= 2
            if not ways:
                continue
            player = (pa + pb) % 10
            banker = (ba + bb) % 10
            if player in NATURAL_SCORES or banker in NATURAL_SCORES:
                wins[_WINNER[player][banker]] += ways * fill_after_four
            elif not PLAYER_DRAWS[player]:
                if BANKER_DRAWS_WHEN_PLAYER_STOOD[banker]:
                    via = ways * fill_after_five
                    for outcome, cards in zip(_WINNER_AFTER_BANKER_THIRD[player][banker], left, strict=True):
                        wins[outcome] += via * cards
                else:
                    wins[_WINNER[player][banker]] += ways * fill_after_four
            else:
                for v in range(10):
                    if not left[v]:
                        continue
                    player_final = (player + v) % 10
                    via = ways * left[v]
                    if banker_draws_after_player(banker, v):
                        # The cards left for the Banker's third, tallied by the outcome each gives:
                        # the whole shoe's tally less the five cards already dealt.
                        outcome_of = _WINNER_AFTER_BANKER_THIRD[player_final][banker]
                        tally = shoe_tally[player_final][banker].copy()
                        tally[outcome_of[pa]] -= 1
                        tally[outcome_of[pb]] -= 1
                        tally[outcome_of[ba]] -= 1
                        tally[outcome_of[bb]] -= 1
                        tally[outcome_of[v]] -= 1
                        wins[0] += via * tally[0]
                        wins[1] += via * tally[1]
                        wins[2] += via * tally[2]
                    else:
                        wins[_WINNER[player_final][banker]] += via * fill_after_five
    denominator = _falling(total, 6)
    assert sum(wins) == denominator, "every ordered six-card deal is counted once"
    ways_of = dict(zip(Outcome.ALL, wins, strict=True))
    return Odds(
        decks=decks,
        player=Fraction(ways_of[Outcome.PLAYER], denominator),
        banker=Fraction(ways_of[Outcome.BANKER], denominator),
        tie=Fraction(ways_of[Outcome.TIE], denominator),
    )


def return_to_player(odds: Odds, bet_type: str, multipliers: Multipliers) -> Fraction:
    """Expected amount returned per unit staked (exact, before rounding to the minor unit)."""
    multiplier = Fraction(multipliers.for_bet(bet_type))
    expected = Fraction(0)
    for outcome, kind in SETTLEMENT[bet_type].items():
        if kind == WIN:
            expected += odds.of(outcome) * multiplier
        elif kind == PUSH:
            expected += odds.of(outcome)
    return expected


def house_edge(odds: Odds, bet_type: str, multipliers: Multipliers) -> Fraction:
    return 1 - return_to_player(odds, bet_type, multipliers)


def odds_report(decks: int, multipliers: Multipliers) -> dict:
    """The shape of ``manage.py odds --json``: probabilities and return to player per bet."""
    odds = exact_odds(decks)
    return {
        "decks": decks,
        "probabilities": {
            "player": float(odds.player),
            "banker": float(odds.banker),
            "tie": float(odds.tie),
        },
        "rtp": {
            bet_type.lower(): float(return_to_player(odds, bet_type, multipliers))
            for bet_type in BetType.ALL
        },
    }
