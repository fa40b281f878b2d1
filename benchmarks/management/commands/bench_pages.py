"""How fast the back-office pages answer at scale, through a real HTTP server (PostgreSQL only).

    manage.py bench_pages [--bets 1000000] [--rounds 100000] [--games 5] [--accounts 10000]
                          [--days 60] [--requests 40] [--reuse] [--drop] [--workers 2]

1. Creates its own database, ``<name>_pages_bench`` next to the configured one (dropped first if it
   is there, unless --reuse finds it filled), and migrates it. The configured database is never
   written.
2. Builds the data set quickly and set-based: rounds dealt by the real engine (PF-1 from real seed
   pairs, so the round page verifies them) and written with COPY; bets, their ledger (a running
   balance per account), settlement batches and audit events with ``INSERT … SELECT`` over
   ``generate_series``. Two games change configuration mid-way (a multiplier, the shoe). Then the
   daily aggregates are rebuilt from it (settlement.aggregates) and the tables are vacuumed and
   analysed.
3. Starts gunicorn on 127.0.0.1 (DEBUG off, a random SECRET_KEY, persistent database connections),
   signs in to the admin as a superuser (session cookie) and takes an API token, then requests
   every admin list page (and the filters and searches operators use on the big lists), round
   pages, the dashboard (default, whole period, one game) and every GET endpoint of the API,
   round-robin, ``--requests`` times each after two warm-up requests, and prints p50 and p95 of the
   whole request per page. Target: p95 under 200 ms for every page. Every page must answer 200:
   the command fails otherwise (tests/benchmarks/test_bench_pages_serves.py runs it small).

The code is in benchmarks.pages.
"""

import signal
import sys

from django.core.management.base import BaseCommand, CommandError

from benchmarks.pages.data import DataSize
from benchmarks.pages.games import GAMES
from benchmarks.pages.run import run


class Command(BaseCommand):
    help = "Build 1,000,000 bets on PostgreSQL in a database of its own and time every page through gunicorn."

    def add_arguments(self, parser):
        parser.add_argument("--bets", type=int, default=1_000_000)
        parser.add_argument("--rounds", type=int, default=100_000)
        parser.add_argument("--games", type=int, default=5, choices=range(1, len(GAMES) + 1))
        parser.add_argument("--accounts", type=int, default=10_000)
        parser.add_argument("--days", type=int, default=60, help="the data spans this many days, up to now")
        parser.add_argument("--requests", type=int, default=40, help="timed requests per page (default 40)")
        parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (default 2)")
        parser.add_argument("--reuse", action="store_true", help="keep the bench database if it holds the data")
        parser.add_argument("--drop", action="store_true", help="drop the bench database at the end")

    def handle(self, *args, **options):
        if options["bets"] < options["rounds"] or options["rounds"] < 10 * options["games"]:
            raise CommandError("--bets must be at least --rounds, and --rounds at least 10 per game")
        # A SIGTERM ends the command through its finally blocks, so the server it started stops too.
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
        size = DataSize(bets=options["bets"], rounds=options["rounds"], games=options["games"],
                        accounts=options["accounts"], days=options["days"])
        failed = run(size, requests=options["requests"], workers=options["workers"], reuse=options["reuse"],
                     drop=options["drop"], say=self.stderr.write, write=self.stdout.write)
        if failed:  # a page that errs is a broken benchmark (or page), never a figure
            raise CommandError(f"{len(failed)} pages did not answer 200: {', '.join(failed)}")
