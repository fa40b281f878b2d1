"""Exact odds of a shoe and the return to player of each bet (baccarat-rules.md, "Exact odds").

    manage.py odds [--decks D] [--player X] [--banker Y] [--tie Z] [--paytable BET_TYPE JSON]… [--json]

The probabilities are exact fractions (games.engine.exact_odds), printed as decimals. Then every bet
type of the registry (docs/game/side-bets.md): each event's number of deals out of all ordered
six-card deals, its probability, its multiplier and its return, under the bet type's default
paytable, the three main bets' at the multipliers given, or the one ``--paytable`` gives as JSON
({"EVENT": "multiplier", …}). With --json the output is one line:
{"decks": D, "probabilities": {...}, "rtp": {...}, "deals": N, "bets": {...}}.
"""

import json
from decimal import Decimal

from django.core.management.base import BaseCommand

from backoffice.formatting import percent
from games.command_arguments import integer_option, usage_error
from games.engine import (
    DEFAULT_MULTIPLIERS,
    REGISTRY,
    BetType,
    Multipliers,
    Outcome,
    PaytableError,
    bet_odds,
    bet_odds_report,
    bet_rtp,
    default_paytables,
    exact_odds,
    house_edge,
    main_paytables,
    make_paytable,
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
        parser.add_argument(
            "--paytable", nargs=2, action="append", default=[], metavar=("BET_TYPE", "JSON"),
            help='a side bet\'s paytable, e.g. DRAGON_BONUS_PLAYER \'{"NATURAL_WIN": "2", "WIN_BY_9": "31", '
                 '"NATURAL_TIE": "1"}\' (events it leaves out lose); repeat for more bet types',
        )
        parser.add_argument("--json", action="store_true", help="print one line of JSON instead of a table")

    def handle(self, *args, **options):
        decks = integer_option(options["decks"] if options["decks"] is not None else DEFAULT_DECKS,
                               validate_decks)
        multipliers = Multipliers(**{
            bet_type.lower(): _multiplier(bet_type.lower(), options[bet_type.lower()])
            for bet_type in BetType.ALL
        })
        paytables = {**default_paytables(), **main_paytables(multipliers), **_paytables(options["paytable"])}
        if options["json"]:
            bets = bet_odds_report(decks, paytables)
            self.stdout.write(json.dumps({**odds_report(decks, multipliers), "deals": bets["deals"],
                                          "bets": bets["bets"]}))
        else:
            self.stdout.write(odds_table(decks, multipliers) + "\n\n" + bets_table(decks, paytables))


def _multiplier(name: str, value) -> Decimal:
    if value is None:
        return getattr(DEFAULT_MULTIPLIERS, name)
    problem = multiplier_problem(value)
    if problem:
        raise usage_error(f"{name} multiplier: {problem}")
    return Decimal(value)


def _paytables(given) -> dict:
    """--paytable BET_TYPE JSON, checked: a usage error names the bet type and the event at fault."""
    paytables = {}
    for name, text in given:
        if name not in REGISTRY:
            raise usage_error(f"paytable {name}: no such bet type (bet types: {', '.join(REGISTRY)})")
        if name in BetType.ALL:
            raise usage_error(f"paytable {name}: the main bets' multipliers are --player, --banker and --tie")
        try:
            mapping = json.loads(text, parse_float=Decimal)  # 12.5 read exactly, never as a float
        except ValueError:
            raise usage_error(f'paytable {name}: must be a JSON object such as {{"EVENT": "2.5"}}') from None
        try:
            paytables[name] = make_paytable(name, mapping)
        except PaytableError as error:
            raise usage_error(f"paytable {name}.{error.field}: {error.message}") from None
    return paytables


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


def bets_table(decks: int, paytables: dict) -> str:
    """Every bet type's events as the published tables show them, with the return to player."""
    report = bet_odds_report(decks, paytables)
    odds = bet_odds(decks)
    lines = [f"Every bet type: deals out of {report['deals']:,} ordered six-card deals "
             f"({report['decks']} deck{'s' if report['decks'] > 1 else ''})"]
    for name, bet in report["bets"].items():
        lines += [
            "",
            f"{REGISTRY[name].label} ({name})",
            f"{'Event':<20}{'Multiplier':>11}{'Combinations':>24}{'Probability':>14}{'Return':>14}",
        ]
        for event in bet["events"]:
            lines.append(f"{event['event']:<20}{event['multiplier']:>11}{event['combinations']:>24,}"
                         f"{event['probability']:>14.{PROBABILITY_PLACES}f}{event['return']:>14.{PROBABILITY_PLACES}f}")
        rtp = bet_rtp(odds[name], paytables[name])
        lines.append(f"Return to player {percent(rtp, PERCENT_PLACES, ' %')}, "
                     f"house edge {percent(1 - rtp, PERCENT_PLACES, ' %')}")
    return "\n".join(lines)
