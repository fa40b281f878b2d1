"""Exact odds of a shoe and the return to player of each bet (baccarat-rules.md, "Exact odds").

    manage.py odds [--decks D] [--player X] [--banker Y] [--tie Z] [--json]

The probabilities are exact fractions (games.engine.exact_odds), printed as decimals. With --json
the output is one line: {"decks": D, "probabilities": {...}, "rtp": {...}}.
"""

import json
from decimal import Decimal

from django.core.management.base import BaseCommand

from backoffice.formatting import percent
from games.command_arguments import integer_option, usage_error
from games.engine import (
    DEFAULT_MULTIPLIERS,
    BetType,
    Multipliers,
    Outcome,
    exact_odds,
    house_edge,
    multiplier_problem,
    odds_report,
    return_to_player,
    validate_decks,
)

DEFAULT_DECKS = 8
PROBABILITY_PLACES = 8
PERCENT_PLACES = 4


class Command(BaseCommand):
    help = "Print the exact outcome probabilities of a shoe and the return to player of each bet."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--decks", help=f"decks in the shoe, 1 to 8 (default {DEFAULT_DECKS})")
        for bet_type in BetType.ALL:
            name = bet_type.lower()
            parser.add_argument(
                f"--{name}", metavar="MULTIPLIER",
                help=f"{name} multiplier, at least 1.0 (default {getattr(DEFAULT_MULTIPLIERS, name)})",
            )
        parser.add_argument("--json", action="store_true", help="print one line of JSON instead of a table")

    def handle(self, *args, **options):
        decks = integer_option(options["decks"] if options["decks"] is not None else DEFAULT_DECKS,
                               validate_decks)
        multipliers = Multipliers(**{
            bet_type.lower(): _multiplier(bet_type.lower(), options[bet_type.lower()])
            for bet_type in BetType.ALL
        })
        if options["json"]:
            self.stdout.write(json.dumps(odds_report(decks, multipliers)))
        else:
            self.stdout.write(odds_table(decks, multipliers))


def _multiplier(name: str, value) -> Decimal:
    if value is None:
        return getattr(DEFAULT_MULTIPLIERS, name)
    problem = multiplier_problem(value)
    if problem:
        raise usage_error(f"{name} multiplier: {problem}")
    return Decimal(value)


def odds_table(decks: int, multipliers: Multipliers) -> str:
    odds = exact_odds(decks)
    lines = [
        f"Exact odds, {decks} deck{'s' if decks > 1 else ''} dealt without replacement",
        "",
        f"{'Outcome':<9}{'Probability':>14}",
    ]
    for outcome in Outcome.ALL:
        lines.append(f"{outcome.title():<9}{float(odds.of(outcome)):>14.{PROBABILITY_PLACES}f}")
    lines += ["", f"{'Bet':<9}{'Multiplier':>12}{'Return to player':>20}{'House edge':>14}"]
    for bet_type in BetType.ALL:
        multiplier = multipliers.for_bet(bet_type)
        rtp = percent(return_to_player(odds, bet_type, multipliers), PERCENT_PLACES, " %")
        edge = percent(house_edge(odds, bet_type, multipliers), PERCENT_PLACES, " %")
        lines.append(f"{bet_type.title():<9}{str(multiplier):>12}{rtp:>20}{edge:>14}")
    return "\n".join(lines)
