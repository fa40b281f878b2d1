"""A game's theoretical return to player against its RTP policy and the ceiling of every game
(settings.MAX_GAME_RTP), exactly (the engine's odds for its decks).

A policy sets, per bet type, a minimum and a maximum RTP, and a maximum for the highest of the three.
Limits are percentages with four decimal places; the comparison is between exact fractions, so a
configuration is refused only when it truly is outside a limit.
"""

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from fractions import Fraction

from django.conf import settings

from games.choices import BetType
from games.engine import Multipliers, exact_odds, return_to_player

MULTIPLIER_FIELDS = {
    BetType.PLAYER: "player_multiplier",
    BetType.BANKER: "banker_multiplier",
    BetType.TIE: "tie_multiplier",
}
# The policy's fields: per bet type (minimum, maximum), and the cap on the highest of the three.
LIMIT_FIELDS = {bet_type: (f"min_{bet_type.lower()}_rtp", f"max_{bet_type.lower()}_rtp") for bet_type in BetType}
HIGHEST_FIELD = "max_rtp"
LIMIT_NAMES = (*(name for pair in LIMIT_FIELDS.values() for name in pair), HIGHEST_FIELD)
PERCENT_PLACES = Decimal("0.0001")


def rtp_text(rtp: Fraction, rounding=ROUND_HALF_EVEN) -> str:
    """An exact RTP as a percentage to four places: "98.9421 %". Set against a limit it is rounded away
    from the limit (down under a minimum, up over a maximum), so it never reads as equal to it."""
    value = (Decimal(rtp.numerator) * 100 / Decimal(rtp.denominator)).quantize(PERCENT_PLACES, rounding)
    return f"{value} %"


def rtp_by_bet(decks: int, multipliers: Multipliers) -> dict:
    odds = exact_odds(decks)
    return {bet_type: return_to_player(odds, bet_type.value, multipliers) for bet_type in BetType}


@dataclass(frozen=True)
class Violation:
    bet_type: BetType
    limit_field: str  # the policy's field whose limit is broken
    message: str


def policy_violations(policy, *, decks: int, multipliers: Multipliers) -> list:
    """Every limit of ``policy`` the configuration breaks (empty when it complies)."""
    rtps = rtp_by_bet(decks, multipliers)
    found = []
    for bet_type, rtp in rtps.items():
        min_field, max_field = LIMIT_FIELDS[bet_type]
        minimum, maximum = getattr(policy, min_field), getattr(policy, max_field)
        if minimum is not None and rtp < Fraction(minimum) / 100:
            found.append(Violation(bet_type, min_field, f"The {bet_type.label} bet's return to player, "
                                   f"{rtp_text(rtp, ROUND_FLOOR)}, is below the minimum of {minimum} % "
                                   f"of the RTP policy “{policy.name}”."))
        if maximum is not None and rtp > Fraction(maximum) / 100:
            found.append(Violation(bet_type, max_field, f"The {bet_type.label} bet's return to player, "
                                   f"{rtp_text(rtp, ROUND_CEILING)}, is above the maximum of {maximum} % "
                                   f"of the RTP policy “{policy.name}”."))
    highest_bet = max(rtps, key=rtps.get)
    if policy.max_rtp is not None and rtps[highest_bet] > Fraction(policy.max_rtp) / 100:
        found.append(Violation(highest_bet, HIGHEST_FIELD, f"The highest return to player, the "
                               f"{highest_bet.label} bet's {rtp_text(rtps[highest_bet], ROUND_CEILING)}, is above the "
                               f"maximum of {policy.max_rtp} % for any bet of the RTP policy “{policy.name}”."))
    return found


def ceiling_violations(*, decks: int, multipliers: Multipliers) -> list:
    """Every bet whose exact RTP exceeds settings.MAX_GAME_RTP, the ceiling of every game whatever its
    policy (a game paying more than it takes loses money on every bet in the long run)."""
    ceiling = Fraction(settings.MAX_GAME_RTP)
    return [Violation(bet_type, "", f"The {bet_type.label} bet's return to player, {rtp_text(rtp, ROUND_CEILING)}, "
                                    f"is above the ceiling of {rtp_text(ceiling)} for any game (MAX_GAME_RTP).")
            for bet_type, rtp in rtp_by_bet(decks, multipliers).items() if rtp > ceiling]


def configuration_errors(policy, *, decks: int, multipliers: Multipliers, field: str | None = None,
                         ceiling: bool = True) -> dict:
    """{field: [messages]} for a game's configuration above the ceiling (with ``ceiling``: a new game's,
    or payouts that change; each under the multiplier it concerns) or outside its policy: each under the
    multiplier it concerns, or all under ``field`` (say ``rtp_policy`` when the policy is what is being
    assigned)."""
    errors = {}
    for violation in ceiling_violations(decks=decks, multipliers=multipliers) if ceiling else ():
        errors.setdefault(MULTIPLIER_FIELDS[violation.bet_type], []).append(violation.message)
    if policy is None:
        return errors
    for violation in policy_violations(policy, decks=decks, multipliers=multipliers):
        errors.setdefault(field or MULTIPLIER_FIELDS[violation.bet_type], []).append(violation.message)
    return errors
