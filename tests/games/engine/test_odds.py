"""Exact odds (baccarat-rules.md, "Exact odds"): the published figures and an independent enumeration."""

from decimal import Decimal
from fractions import Fraction

import pytest

from games.engine import (
    DEFAULT_MULTIPLIERS,
    BetType,
    Multipliers,
    Odds,
    exact_odds,
    house_edge,
    odds_report,
    return_to_player,
)
from games.engine.rules import play_positions

from .spec_oracle import index_of_value

PUBLISHED_PROBABILITIES = {"banker": "0.458597", "player": "0.446247", "tie": "0.095156"}
PUBLISHED_RTP_PERCENT = {BetType.BANKER: "98.94", BetType.PLAYER: "98.76", BetType.TIE: "85.64"}


@pytest.mark.parametrize("outcome", ["banker", "player", "tie"])
def test_eight_deck_probability_is_the_published_figure_to_6_places(outcome):
    probability = getattr(exact_odds(8), outcome)
    assert isinstance(probability, Fraction)
    assert f"{float(probability):.6f}" == PUBLISHED_PROBABILITIES[outcome]


@pytest.mark.parametrize("bet_type", BetType.ALL)
def test_eight_deck_return_to_player_is_the_published_figure(bet_type):
    rtp = return_to_player(exact_odds(8), bet_type, DEFAULT_MULTIPLIERS)
    assert f"{float(rtp) * 100:.2f}" == PUBLISHED_RTP_PERCENT[bet_type]
    assert house_edge(exact_odds(8), bet_type, DEFAULT_MULTIPLIERS) == 1 - rtp


@pytest.mark.parametrize("decks", range(1, 9))
def test_probabilities_sum_exactly_to_one(decks):
    odds = exact_odds(decks)
    assert odds.decks == decks
    assert odds.player + odds.banker + odds.tie == 1
    assert all(0 < p < 1 for p in (odds.player, odds.banker, odds.tie))
    # The denominator divides the number of ordered six-card deals N·(N−1)…(N−5).
    n = 52 * decks
    deals = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)
    assert all(deals % p.denominator == 0 for p in (odds.player, odds.banker, odds.tie))


def test_return_to_player_is_exact_and_follows_the_settlement_table():
    odds = exact_odds(8)
    multipliers = Multipliers(Decimal("2.0"), Decimal("1.95"), Decimal("9.0"))
    assert return_to_player(odds, BetType.PLAYER, multipliers) == 2 * odds.player + odds.tie
    assert return_to_player(odds, BetType.BANKER, multipliers) == Fraction(195, 100) * odds.banker + odds.tie
    assert return_to_player(odds, BetType.TIE, multipliers) == 9 * odds.tie


def brute_force_odds(decks: int) -> Odds:
    """Every ordered deal of card values, weighted by how many cards of the shoe give it, decided
    by the rules engine itself (play_positions) as a black box: the enumeration branches on a
    position only when the round actually deals it. Independent of games.engine.odds."""
    counts = [16 * decks] + [4 * decks] * 9  # value 0: 10 J Q K; values 1–9: A, 2–9
    n = 52 * decks
    wins = {"PLAYER": 0, "BANKER": 0, "TIE": 0}
    denominator = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)

    def extend(values, ways, left):
        cards = [index_of_value(v, deck) for deck, v in enumerate(values)]
        cards += [index_of_value(0, 7)] * (6 - len(cards))  # placeholders, for positions not yet set
        result = play_positions(*cards)
        if len(result.card_indices) <= len(values):
            # The round is decided by the positions set so far; the others can be any cards.
            rest = 1
            for k in range(len(values), 6):
                rest *= n - k
            wins[result.outcome] += ways * rest
            return
        for v in range(10):
            if left[v]:
                left[v] -= 1
                extend(values + [v], ways * (left[v] + 1), left)
                left[v] += 1

    def first_four(values, ways, left):
        if len(values) == 4:
            extend(values, ways, left)
            return
        for v in range(10):
            if left[v]:
                left[v] -= 1
                first_four(values + [v], ways * (left[v] + 1), left)
                left[v] += 1

    first_four([], 1, counts.copy())
    assert sum(wins.values()) == denominator
    return Odds(decks, *(Fraction(wins[o], denominator) for o in ("PLAYER", "BANKER", "TIE")))


@pytest.mark.parametrize("decks", [1, 8])
def test_exact_odds_equal_a_brute_force_enumeration_through_the_rules_engine(decks):
    assert exact_odds(decks) == brute_force_odds(decks)


@pytest.mark.parametrize("decks", [1, 6, 8])
def test_odds_report_shape(decks):
    report = odds_report(decks, DEFAULT_MULTIPLIERS)
    assert list(report) == ["decks", "probabilities", "rtp"]
    assert report["decks"] == decks
    assert list(report["probabilities"]) == ["player", "banker", "tie"]
    assert list(report["rtp"]) == ["player", "banker", "tie"]
    odds = exact_odds(decks)
    assert report["probabilities"]["banker"] == float(odds.banker)
    assert report["rtp"]["tie"] == float(return_to_player(odds, BetType.TIE, DEFAULT_MULTIPLIERS))
    assert all(isinstance(v, float) for part in ("probabilities", "rtp") for v in report[part].values())


def test_exact_odds_is_cached_per_deck_count():
    assert exact_odds(8) is exact_odds(8)
    assert exact_odds(1) != exact_odds(8)
