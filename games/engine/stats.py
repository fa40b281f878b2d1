"""Statistics of outcomes, in plain Python: the chi-square test and the exact chance of a natural.

``chi2_sf(x, df)`` is the survival function of the chi-square distribution, P(X ≥ x) for X with
``df`` degrees of freedom, that is the regularized upper incomplete gamma function Q(df/2, x/2).
For whole ``df`` (every test here) it uses the closed forms, which are exact up to floating point:

- df even: Q = e^(-x/2) · Σ_{j<df/2} (x/2)^j / j!
- df odd:  Q = erfc(√(x/2)) + e^(-x/2) · Σ_{j=1}^{(df-1)/2} (x/2)^(j-1/2) / Γ(j+1/2)

and for any other positive ``df`` the series and the continued fraction of the incomplete gamma
function (Numerical Recipes, 6.2), to full double precision.
"""

import math
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

from .cards import CARDS_PER_DECK, RANK_VALUES, SUITS
from .rules import NATURAL_SCORES

_EPSILON = 1e-16
_TINY = 1e-300
_MAX_ITERATIONS = 10_000


def _series_p(a: float, x: float) -> float:
    """The lower regularized gamma P(a, x) by its power series (converges fast for x < a + 1)."""
    term = total = 1.0 / a
    n = a
    for _ in range(_MAX_ITERATIONS):
        n += 1.0
        term *= x / n
        total += term
        if abs(term) < abs(total) * _EPSILON:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _continued_fraction_q(a: float, x: float) -> float:
    """The upper regularized gamma Q(a, x) by its continued fraction (modified Lentz, x ≥ a + 1)."""
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_ITERATIONS):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < _TINY:
            d = _TINY
        c = b + an / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPSILON:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def regularized_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a) for a > 0, x ≥ 0."""
    if a <= 0 or math.isnan(a):
        raise ValueError("a must be positive")
    if x < 0 or math.isnan(x):
        raise ValueError("x must be at least 0")
    if x == 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _series_p(a, x))
    return min(1.0, _continued_fraction_q(a, x))


def chi2_sf(x: float, df: float) -> float:
    """P(X ≥ x) for X chi-square distributed with ``df`` degrees of freedom (the p-value of x)."""
    if df <= 0 or math.isnan(df):
        raise ValueError("df must be positive")
    if math.isnan(x):
        raise ValueError("x must be a number")
    if x <= 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    if df != int(df) or df > 1000:
        return regularized_gamma_q(df / 2.0, x / 2.0)
    df = int(df)
    half = x / 2.0
    if df % 2 == 0:
        # e^(-h) · Σ_{j<k} h^j / j!, each term built from the previous one.
        term = math.exp(-half)
        total = term
        for j in range(1, df // 2):
            term *= half / j
            total += term
        return min(1.0, total)
    total = math.erfc(math.sqrt(half))
    # e^(-h) · h^(j-1/2) / Γ(j+1/2) for j = 1: e^(-h) · √h / Γ(3/2) = e^(-h) · 2√(h/π).
    term = math.exp(-half) * math.sqrt(half) / math.gamma(1.5)
    for j in range(1, (df - 1) // 2 + 1):
        if j > 1:
            term *= half / (j - 0.5)
        total += term
    return min(1.0, total)


class ChiSquare(NamedTuple):
    statistic: float
    df: int
    p_value: float
    expected: tuple  # expected count per category


def chi_square_test(observed, probabilities) -> ChiSquare | None:
    """Pearson's goodness-of-fit test of counts against the probabilities of their categories.

    ``probabilities`` may be exact fractions; they are normalised to sum to 1. Categories of zero
    probability must have zero counts (otherwise the p-value is 0). None when there is nothing to
    test (no observations, or fewer than two categories of positive probability).
    """
    observed = [int(count) for count in observed]
    probabilities = [Fraction(p) for p in probabilities]
    if len(observed) != len(probabilities):
        raise ValueError("one probability per category")
    if any(count < 0 for count in observed) or any(p < 0 for p in probabilities):
        raise ValueError("counts and probabilities must not be negative")
    n = sum(observed)
    total = sum(probabilities)
    if n == 0 or total == 0:
        return None
    expected = [float(n * p / total) for p in probabilities]
    categories = [(o, e) for o, e in zip(observed, expected, strict=True) if e > 0]
    if any(o > 0 and e == 0 for o, e in zip(observed, expected, strict=True)):
        return ChiSquare(math.inf, max(len(categories) - 1, 1), 0.0, tuple(expected))
    if len(categories) < 2:
        return None
    statistic = sum((o - e) ** 2 / e for o, e in categories)
    df = len(categories) - 1
    return ChiSquare(statistic, df, chi2_sf(statistic, df), tuple(expected))


def chi_square_test_expected(observed, expected) -> ChiSquare | None:
    """The same test when the expected counts are already known (a mixture of shoes, say)."""
    expected = [float(e) for e in expected]
    if sum(expected) <= 0:
        return None
    return chi_square_test(observed, [Fraction(e) for e in expected])


@lru_cache(maxsize=8)
def natural_probability(decks: int) -> Fraction:
    """The exact chance that a round is a natural (either hand's two cards score 8 or 9).

    Positions 1–4 are an ordered draw without replacement from the shoe; enumerated over card
    values with their multiplicities, as exact_odds does.
    """
    counts = [0] * 10
    for value in RANK_VALUES.values():
        counts[value] += len(SUITS) * decks
    total = CARDS_PER_DECK * decks
    naturals = 0
    for p1 in range(10):
        ways1 = counts[p1]
        if not ways1:
            continue
        counts[p1] -= 1
        for b1 in range(10):
            ways2 = ways1 * counts[b1]
            if not ways2:
                continue
            counts[b1] -= 1
            for p2 in range(10):
                ways3 = ways2 * counts[p2]
                if not ways3:
                    continue
                counts[p2] -= 1
                player_natural = (p1 + p2) % 10 in NATURAL_SCORES
                for b2 in range(10):
                    if player_natural or (b1 + b2) % 10 in NATURAL_SCORES:
                        naturals += ways3 * counts[b2]
                counts[p2] += 1
            counts[b1] += 1
        counts[p1] += 1
    return Fraction(naturals, total * (total - 1) * (total - 2) * (total - 3))
