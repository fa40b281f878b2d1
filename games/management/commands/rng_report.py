"""Evidence that outcomes follow the published odds: play N rounds through the real engine and test.

    manage.py rng_report --rounds N [--decks D] [--rotate-every K] [--json] [--no-progress]

Every K rounds (default 1,000) a fresh seed pair is drawn as the game draws one (a random 64-hex
server seed from ``secrets``, a random client seed), and its rounds are dealt by
``games.engine.Dealer`` with nonces 0, 1, 2, …, exactly as the game deals them. The observed
PLAYER / BANKER / TIE counts are set against the exact probabilities of the shoe
(``games.engine.exact_odds``) with Pearson's chi-square test (2 degrees of freedom), and naturals
against their exact probability (1 degree of freedom). A progress bar goes to stderr for long runs.
"""

import json
import secrets
import sys
from time import monotonic

from django.core.management.base import BaseCommand

from games.command_arguments import integer_option, positive
from games.engine import Dealer, Outcome, exact_odds, validate_decks
from games.engine.stats import chi_square_test, natural_probability

DEFAULT_DECKS = 8
DEFAULT_ROTATE_EVERY = 1000
PROGRESS_FROM = 20_000  # runs of fewer rounds show no progress bar
BAR_WIDTH = 30


class Progress:
    """A plain-text bar on a stream, redrawn in place with a carriage return at most 100 times."""

    def __init__(self, stream, total: int, enabled: bool):
        self.stream, self.total, self.enabled = stream, total, enabled
        self.started = monotonic()
        self.next_percent = 0
        self.drawn = -1

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        percent = done * 100 // self.total
        if done == self.drawn or (percent < self.next_percent and done != self.total):
            return
        self.next_percent = percent + 1
        self.drawn = done
        filled = BAR_WIDTH * done // self.total
        elapsed = monotonic() - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate else 0.0
        self.stream.write(f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {percent:3d}% "
                          f"{done:,}/{self.total:,} rounds  {rate:,.0f}/s  eta {eta:.0f} s ")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.update(self.total)
            self.stream.write("\n")
            self.stream.flush()


def play(rounds: int, decks: int, rotate_every: int, progress: Progress) -> dict:
    counts = {outcome: 0 for outcome in Outcome.ALL}
    naturals = 0
    seed_pairs = 0
    done = 0
    step = max(1, min(rotate_every, 5000))
    while done < rounds:
        dealer = Dealer(secrets.token_hex(32), secrets.token_hex(8))
        seed_pairs += 1
        nonce = 0
        in_pair = min(rotate_every, rounds - done)
        while nonce < in_pair:
            chunk = min(step, in_pair - nonce)
            deal = dealer.play
            for n in range(nonce, nonce + chunk):
                result = deal(n, decks)
                counts[result.outcome] += 1
                naturals += result.natural
            nonce += chunk
            done += chunk
            progress.update(done)
    return {"counts": counts, "naturals": naturals, "seed_pairs": seed_pairs}


def report(rounds: int, decks: int, played: dict) -> dict:
    odds = exact_odds(decks)
    counts = played["counts"]
    outcome_test = chi_square_test([counts[o] for o in Outcome.ALL], [odds.of(o) for o in Outcome.ALL])
    p_natural = natural_probability(decks)
    natural_test = chi_square_test([played["naturals"], rounds - played["naturals"]], [p_natural, 1 - p_natural])
    rows = []
    for outcome, expected in zip(Outcome.ALL, outcome_test.expected, strict=True):
        rows.append({"outcome": outcome, "observed": counts[outcome], "frequency": counts[outcome] / rounds,
                     "probability": float(odds.of(outcome)), "expected": expected,
                     "residual": (counts[outcome] - expected) / expected ** 0.5})
    return {
        "rounds": rounds,
        "decks": decks,
        "seed_pairs": played["seed_pairs"],
        "outcomes": rows,
        "chi_square": {"statistic": outcome_test.statistic, "df": outcome_test.df, "p_value": outcome_test.p_value},
        "naturals": {"observed": played["naturals"], "frequency": played["naturals"] / rounds,
                     "probability": float(p_natural), "expected": natural_test.expected[0],
                     "chi_square": {"statistic": natural_test.statistic, "df": natural_test.df,
                                    "p_value": natural_test.p_value}},
    }


def verdict(p_value: float) -> str:
    if p_value < 0.001:
        return "p < 0.001: far from the published odds; run again with more rounds, then investigate"
    if p_value < 0.01:
        return "p < 0.01: unusual; run again with more rounds (1 run in 100 looks like this by chance)"
    return "consistent with the published odds (p ≥ 0.01)"


def text(figures: dict) -> str:
    decks = figures["decks"]
    lines = [
        f"{figures['rounds']:,} rounds of {decks} deck{'s' if decks > 1 else ''} through the engine, "
        f"{figures['seed_pairs']:,} fresh seed pair{'s' if figures['seed_pairs'] > 1 else ''}",
        "",
        f"{'Outcome':<9}{'Observed':>12}{'Frequency':>12}{'Exact':>12}{'Expected':>14}{'Residual':>10}",
    ]
    for row in figures["outcomes"]:
        lines.append(f"{row['outcome'].title():<9}{row['observed']:>12,}{row['frequency']:>12.6f}"
                     f"{row['probability']:>12.6f}{row['expected']:>14,.1f}{row['residual']:>+10.2f}")
    naturals = figures["naturals"]
    lines.append(f"{'Natural':<9}{naturals['observed']:>12,}{naturals['frequency']:>12.6f}"
                 f"{naturals['probability']:>12.6f}{naturals['expected']:>14,.1f}")
    test = figures["chi_square"]
    natural_test = naturals["chi_square"]
    lines += [
        "",
        f"Outcomes: chi-square {test['statistic']:.4f}, {test['df']} degrees of freedom, "
        f"p-value {test['p_value']:.4f}: {verdict(test['p_value'])}",
        f"Naturals: chi-square {natural_test['statistic']:.4f}, {natural_test['df']} degree of freedom, "
        f"p-value {natural_test['p_value']:.4f}: {verdict(natural_test['p_value'])}",
    ]
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Play N rounds from fresh random seeds through the engine; observed against exact outcome frequencies."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--rounds", required=True, help="rounds to play")
        parser.add_argument("--decks", default=str(DEFAULT_DECKS), help=f"decks in the shoe, 1 to 8 "
                            f"(default {DEFAULT_DECKS})")
        parser.add_argument("--rotate-every", default=str(DEFAULT_ROTATE_EVERY),
                            help=f"rounds per seed pair (default {DEFAULT_ROTATE_EVERY})")
        parser.add_argument("--json", action="store_true", help="print the figures as one line of JSON")
        parser.add_argument("--progress", dest="progress", action="store_true", default=None,
                            help="always show the progress bar on stderr")
        parser.add_argument("--no-progress", dest="progress", action="store_false",
                            help="never show the progress bar")

    def handle(self, *args, **options):
        rounds = positive("rounds", options["rounds"])
        rotate_every = positive("rotate-every", options["rotate_every"])
        decks = integer_option(options["decks"], validate_decks)
        show = options["progress"] if options["progress"] is not None else rounds >= PROGRESS_FROM
        stream = getattr(self.stderr, "_out", sys.stderr)
        progress = Progress(stream, rounds, show)
        played = play(rounds, decks, rotate_every, progress)
        progress.finish()
        figures = report(rounds, decks, played)
        self.stdout.write(json.dumps(figures) if options["json"] else text(figures))
