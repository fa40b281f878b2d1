"""manage.py bench_engine [--rounds N] [--decks D] [--repeats R] [--json]: see benchmarks.engine."""

import json

from django.core.management.base import BaseCommand

from benchmarks.engine import measure, report_lines
from games.command_arguments import integer_option, positive
from games.engine import validate_decks


class Command(BaseCommand):
    help = "Measure rounds per second of the game core against the HMAC floor, and exact-odds time."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--rounds", default="20000", help="rounds per measurement (default 20000)")
        parser.add_argument("--decks", default="8", help="decks in the shoe, 1 to 8 (default 8)")
        parser.add_argument("--repeats", default="25", help="interleaved measurements, best kept (default 25)")
        parser.add_argument("--json", action="store_true", help="print the figures as one line of JSON")

    def handle(self, *args, **options):
        rounds = positive("rounds", options["rounds"])
        repeats = positive("repeats", options["repeats"])
        decks = integer_option(options["decks"], validate_decks)
        figures = measure(rounds, decks, repeats)
        if options["json"]:
            self.stdout.write(json.dumps(figures))
        else:
            self.stdout.write("\n".join(report_lines(figures)))
