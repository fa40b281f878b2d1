"""A game's theoretical return to player against its RTP policy and the ceiling of every game
(settings.MAX_GAME_RTP), exactly (the engine's odds for its decks).

A policy sets, per bet type, a minimum and a maximum RTP, and a maximum for the highest of them. The
main bets' RTPs come from the game's multipliers, each side bet's from its paytable (a bet type the
game does not offer has no RTP, so its limits do not apply).
Limits are percentages with four decimal places; the comparison is between exact fractions, so a
configuration is refused only when it truly is outside a limit.
"""

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from fractions import Fraction

from django.conf import settings

from games.choices import BetType
from games.engine import MAIN_BET_TYPES, Multipliers, bet_odds, bet_rtp, exact_odds, make_paytable, return_to_player

MULTIPLIER_FIELDS = {
    BetType.PLAYER: "player_multiplier",
    BetType.BANKER: "banker_multiplier",
    BetType.TIE: "tie_multiplier",
}
SIDE_BETS_FIELD = "side_bets"  # the game's field holding every side bet's paytable
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


def rtp_by_bet(decks: int, multipliers: Multipliers, side_bets=None) -> dict:
    """{bet type: exact RTP} of the main bets and of each side bet in ``side_bets`` ({name: paytable})."""
    odds = exact_odds(decks)
    rtps = {BetType(name): return_to_player(odds, name, multipliers) for name in MAIN_BET_TYPES}
    if side_bets:
        counts = bet_odds(decks)
        rtps.update({BetType(name): bet_rtp(counts[name], make_paytable(name, paytable))
                     for name, paytable in side_bets.items()})
    return rtps


def field_of(bet_type: str) -> str:
    """The game's field that prices ``bet_type``: a main bet's multiplier, or the side bets."""
    return MULTIPLIER_FIELDS.get(bet_type, SIDE_BETS_FIELD)


@dataclass(frozen=True)
class Violation:
    bet_type: BetType
    limit_field: str  # the policy's field whose limit is broken
    message: str


def policy_violations(policy, *, decks: int, multipliers: Multipliers, side_bets=None) -> list:
    """Every limit of ``policy`` the configuration breaks (empty when it complies)."""
    rtps = rtp_by_bet(decks, multipliers, side_bets)
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


def ceiling_violations(*, decks: int, multipliers: Multipliers, side_bets=None) -> list:
    """Every bet whose exact RTP exceeds settings.MAX_GAME_RTP, the ceiling of every game whatever its
    policy (a game paying more than it takes loses money on every bet in the long run)."""
    ceiling = Fraction(settings.MAX_GAME_RTP)
    return [Violation(bet_type, "", f"The {bet_type.label} bet's return to player, {rtp_text(rtp, ROUND_CEILING)}, "
                                    f"is above the ceiling of {rtp_text(ceiling)} for any game (MAX_GAME_RTP).")
            for bet_type, rtp in rtp_by_bet(decks, multipliers, side_bets).items() if rtp > ceiling]


def configuration_errors(policy, *, decks: int, multipliers: Multipliers, field: str | None = None,
                         ceiling: bool = True, side_bets=None) -> dict:
    """{field: [messages]} for a game's configuration above the ceiling (with ``ceiling``: a new game's,
    or payouts that change; each under the multiplier it concerns) or outside its policy: each under the
    multiplier it concerns, or all under ``field`` (say ``rtp_policy`` when the policy is what is being
    assigned)."""
    errors = {}
    for violation in ceiling_violations(decks=decks, multipliers=multipliers, side_bets=side_bets) if ceiling else ():
        errors.setdefault(field_of(violation.bet_type), []).append(violation.message)
    if policy is None:
        return errors
    for violation in policy_violations(policy, decks=decks, multipliers=multipliers, side_bets=side_bets):
        errors.setdefault(field or field_of(violation.bet_type), []).append(violation.message)
    return errors
