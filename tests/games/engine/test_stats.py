"""The chi-square survival function against known values, the test itself, and the exact chance of a natural."""

import itertools
import math
import random
from fractions import Fraction
from itertools import pairwise

import pytest

from games.engine import Dealer, exact_odds
from games.engine.cards import CARDS_PER_DECK, RANK_VALUES, RANKS, SUITS
from games.engine.stats import (
    chi2_sf,
    chi_square_test,
    chi_square_test_expected,
    natural_probability,
    regularized_gamma_q,
)

# (x, df, P(X >= x)) from statistical tables (the classic critical values) and closed forms.
KNOWN = [
    (3.841, 1, 0.05001368376395671),
    (5.991, 2, 0.05001161502657909),
    (11.345, 3, 0.009999384083287113),
    (9.488, 4, 0.04999440557799463),
    (15.086, 5, 0.010001124762185856),
    (1.0, 1, math.erfc(1 / math.sqrt(2))),  # 0.3173105078629141
    (2.0, 2, math.exp(-1)),
    (10.0, 5, 0.07523524614651217),
]

# Critical values printed to three decimals in every table: P is 0.05 or 0.01 to that precision.
CRITICAL = [(6.635, 1, 0.01), (9.210, 2, 0.01), (7.815, 3, 0.05), (18.307, 10, 0.05), (3.841, 1, 0.05),
            (5.991, 2, 0.05), (11.345, 3, 0.01)]


@pytest.mark.parametrize(("x", "df", "expected"), KNOWN)
def test_chi2_sf_known_values(x, df, expected):
    assert chi2_sf(x, df) == pytest.approx(expected, rel=2e-5)


@pytest.mark.parametrize(("x", "df", "alpha"), CRITICAL)
def test_chi2_sf_critical_values(x, df, alpha):
    assert chi2_sf(x, df) == pytest.approx(alpha, abs=alpha * 2e-3)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 7, 10, 31])
@pytest.mark.parametrize("x", [0.01, 0.5, 1.0, 3.0, 12.0, 40.0, 150.0])
def test_closed_forms_agree_with_the_incomplete_gamma(df, x):
    assert chi2_sf(x, df) == pytest.approx(regularized_gamma_q(df / 2, x / 2), rel=1e-9, abs=1e-300)


def test_edges_and_monotonicity():
    assert chi2_sf(0, 3) == 1.0
    assert chi2_sf(-1, 3) == 1.0
    assert chi2_sf(math.inf, 3) == 0.0
    assert 0.0 <= chi2_sf(2000, 2) < 1e-300
    values = [chi2_sf(x / 10, 2.5) for x in range(1, 200)]
    assert all(a > b for a, b in pairwise(values))
    with pytest.raises(ValueError):
        chi2_sf(1.0, 0)
    with pytest.raises(ValueError):
        regularized_gamma_q(1.0, -1)


def test_chi_square_test_by_hand():
    # 60 rolls of a die: a textbook example.
    result = chi_square_test([5, 8, 9, 8, 10, 20], [Fraction(1, 6)] * 6)
    assert result.df == 5
    assert result.statistic == pytest.approx(13.4)
    assert result.p_value == pytest.approx(0.019905220334774, rel=1e-6)
    assert result.expected == (10.0,) * 6


def test_chi_square_test_edges():
    assert chi_square_test([0, 0, 0], [1, 1, 1]) is None
    perfect = chi_square_test([50, 50], [Fraction(1, 2), Fraction(1, 2)])
    assert perfect.statistic == 0 and perfect.p_value == 1.0
    impossible = chi_square_test([3, 1], [1, 0])
    assert impossible.p_value == 0.0
    assert chi_square_test_expected([10, 30], [20.0, 20.0]).statistic == pytest.approx(10.0)
    with pytest.raises(ValueError):
        chi_square_test([1, 2], [1])


def natural_by_ranks(decks: int) -> Fraction:
    """The same chance by another enumeration: ordered ranks (not values) of positions 1–4."""
    count = {rank: len(SUITS) * decks for rank in RANKS}
    total = CARDS_PER_DECK * decks
    naturals = 0
    for p1, b1, p2, b2 in itertools.product(RANKS, repeat=4):
        left = dict(count)
        ways = 1
        for rank in (p1, b1, p2, b2):
            ways *= left[rank]
            left[rank] -= 1
        if ways and ((RANK_VALUES[p1] + RANK_VALUES[p2]) % 10 >= 8 or (RANK_VALUES[b1] + RANK_VALUES[b2]) % 10 >= 8):
            naturals += ways
    return Fraction(naturals, total * (total - 1) * (total - 2) * (total - 3))


@pytest.mark.parametrize("decks", [1, 2, 8])
def test_natural_probability_is_exact(decks):
    assert natural_probability(decks) == natural_by_ranks(decks)


def test_the_real_engine_passes_the_test():
    """The dealer's outcomes against the exact odds: a fixed seed, so the test is deterministic."""
    rng = random.Random(6)
    dealer = Dealer("".join(rng.choice("0123456789abcdef") for _ in range(64)), "stats-test")
    counts = {"PLAYER": 0, "BANKER": 0, "TIE": 0}
    naturals = 0
    rounds = 20_000
    for nonce in range(rounds):
        result = dealer.play(nonce, 8)
        counts[result.outcome] += 1
        naturals += result.natural
    odds = exact_odds(8)
    outcome_test = chi_square_test([counts["PLAYER"], counts["BANKER"], counts["TIE"]],
                                   [odds.player, odds.banker, odds.tie])
    natural_test = chi_square_test([naturals, rounds - naturals], [natural_probability(8), 1 - natural_probability(8)])
    assert outcome_test.p_value > 0.001
    assert natural_test.p_value > 0.001
