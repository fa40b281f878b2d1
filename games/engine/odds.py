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
from .payout import SETTLEMENT, WIN, PUSH, BetType, Multipliers
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


# winner() of every pair of final scores, looked up in the inner loops.
_WINNER = tuple(tuple(winner(p, b) for b in range(10)) for p in range(10))


@lru_cache(maxsize=8)
def exact_odds(decks: int) -> Odds:
    counts = _value_counts(decks)
    total = CARDS_PER_DECK * decks
    wins = {Outcome.PLAYER: 0, Outcome.BANKER: 0, Outcome.TIE: 0}
    # Ways to fill the unused positions after 4 or 5 cards, so every round counts as six cards.
    fill_after_four = (total - 4) * (total - 5)
    fill_after_five = total - 5
    pairs = [(a, b) for a in range(10) for b in range(a, 10)]
    for pa, pb in pairs:
        for ba, bb in pairs:
            # Ordered ways to deal these two hands at positions 1–4: each hand's two orders, times
            # the falling counts of each value over the four cards.
            used = [0] * 10
            for v in (pa, pb, ba, bb):
                used[v] += 1
            ways = (1 if pa == pb else 2) * (1 if ba == bb else 2)
            for v in {pa, pb, ba, bb}:
                ways *= _falling(counts[v], used[v])
            if not ways:
                continue
            left = [counts[v] - (pa == v) - (pb == v) - (ba == v) - (bb == v) for v in range(10)]
            player = (pa + pb) % 10
            banker = (ba + bb) % 10
            if player in NATURAL_SCORES or banker in NATURAL_SCORES:
                wins[_WINNER[player][banker]] += ways * fill_after_four
            elif not PLAYER_DRAWS[player]:
                if BANKER_DRAWS_WHEN_PLAYER_STOOD[banker]:
                    for v in range(10):
                        wins[_WINNER[player][(banker + v) % 10]] += ways * left[v] * fill_after_five
                else:
                    wins[_WINNER[player][banker]] += ways * fill_after_four
            else:
                for v in range(10):
                    if not left[v]:
                        continue
                    player_final = (player + v) % 10
                    via = ways * left[v]
                    if banker_draws_after_player(banker, v):
                        left[v] -= 1
                        outcome_of = _WINNER[player_final]
                        for w in range(10):
                            wins[outcome_of[(banker + w) % 10]] += via * left[w]
                        left[v] += 1
                    else:
                        wins[_WINNER[player_final][banker]] += via * fill_after_five
    denominator = _falling(total, 6)
    assert sum(wins.values()) == denominator, "every ordered six-card deal is counted once"
    return Odds(
        decks=decks,
        player=Fraction(wins[Outcome.PLAYER], denominator),
        banker=Fraction(wins[Outcome.BANKER], denominator),
        tie=Fraction(wins[Outcome.TIE], denominator),
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
