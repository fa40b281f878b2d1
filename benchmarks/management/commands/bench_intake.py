"""Bets per second through gunicorn on PostgreSQL, each figure beside a floor measured in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_intake_bench \\
        python manage.py bench_intake [--clients 16] [--seconds 15] [--slices 3] [--workers 4] [--bulk-size 100]
                                      [--accounts 1000] [--rounds 150] [--lag-seconds 60]
                                      [--broker redis://127.0.0.1:6379/12] [--cache redis://127.0.0.1:6379/11]
                                      [--prefill 20000000]

1. Drops and re-creates the configured database (its name must end in "bench"), migrates it, and
   fills it: an integration client with its token, one game, funded accounts, open rounds.
2. Starts gunicorn as in production (DEBUG off, persistent connections, the throttle's windows in
   the Redis cache ``--cache``) and a Celery worker, driven from a lean asyncio client (``--clients``
   requests in flight, a connection per request, as gunicorn's sync workers close them). With
   ``--prefill N``: single bets / framework floor on the empty tables, ``--slices`` turns; then N
   settled bets of the past and their ledger entries (benchmarks.intake.prefill), so that what
   follows is measured against tables that already hold tens of millions of rows, and the ratio
   compared with the empty tables' in the same run.
3. The SQL floor: pgbench runs a bet's durable writes (balance, bet, ledger entry) as one
   transaction per bet at the same concurrency. Then the phases: the framework floor (a 404), an
   authenticated read, single bets over many rounds, single bets on one round, bulk bets, each phase
   in ``--slices`` slices taken in turn with the others' (so that a slow spell of a noisy machine
   weighs on all of them alike); then, for ``--lag-seconds``, single bets at 80 % of their measured
   maximum while a round of 1,000 bets and then a round a second are dealt, and the settlement lag
   of each (0 skips it).
4. Prints requests and bets per second with p50 and p99, the ratios against the targets (single /
   floor also turn by turn, the spread a noisy machine gives it), and checks that the ledger still
   equals every balance.

With ``--url URL`` given twice or more, against web nodes already running (``make cluster``; DATABASE_URL
and API_TOKEN_PEPPERS the nodes', from the cluster's cluster.env) instead: nothing is dropped, the
run's client, game, accounts and rounds are added under a name of its own, and single bets go through
the first node alone and through all of them in turn (round-robin), slice by slice, then the settlement
lag while they take bets (benchmarks.intake.nodes).

The code is in benchmarks.intake.
"""

import fcntl
import signal
import sys
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from benchmarks.intake.nodes import run_nodes
from benchmarks.intake.run import Plan, run

EXAMPLE_URL = "DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_intake_bench"


class Command(BaseCommand):
    help = "Bets per second through gunicorn against the framework and SQL floors, measured in one run."

    def add_arguments(self, parser):
        parser.add_argument("--clients", type=int, default=16, help="requests in flight (default 16)")
        parser.add_argument("--seconds", type=float, default=15, help="seconds a phase (default 15)")
        parser.add_argument("--slices", type=int, default=3,
                            help="slices each phase is measured in, taken in turn with the others' (default 3)")
        parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4)")
        parser.add_argument("--bulk-size", type=int, default=100, help="bets a bulk request (default 100)")
        parser.add_argument("--accounts", type=int, default=1000, help="default 1000")
        parser.add_argument("--rounds", type=int, default=150, help="rounds the many-rounds phases spread over")
        parser.add_argument("--lag-seconds", type=float, default=60,
                            help="seconds of dealing under load (default 60; 0 skips it)")
        parser.add_argument("--broker", default="redis://127.0.0.1:6379/12",
                            help="Celery broker of the bench's worker (default redis://127.0.0.1:6379/12)")
        parser.add_argument("--cache", default="redis://127.0.0.1:6379/11",
                            help="the Redis cache of the bench's gunicorn, as CACHE_URL in production "
                                 "(default redis://127.0.0.1:6379/11)")
        parser.add_argument("--prefill", type=int, default=0, metavar="BETS",
                            help="settled bets of the past (and their ledger entries) written before the phases, "
                                 "e.g. 20000000 (default 0)")
        parser.add_argument("--url", action="append", default=[], metavar="URL",
                            help="a running web node (http://host:port); given twice or more, the run drives those "
                                 "nodes and one of them alone instead of gunicorns of its own")

    def handle(self, *args, **options):
        name = connection.settings_dict["NAME"] or ""
        if len(options["url"]) == 1:
            raise CommandError("--url: give two web nodes or more, to compare them with one")
        if not name.endswith("bench") and not options["url"]:
            raise CommandError(f"bench_intake drops and re-creates the database it runs on, and {name!r} does not "
                               f"end in 'bench'. Use a database of its own, e.g. {EXAMPLE_URL}.")
        if (not 1 <= options["bulk_size"] <= 1000 or options["clients"] < 1 or options["seconds"] <= 0
                or options["slices"] < 1 or options["prefill"] < 0):
            raise CommandError("--bulk-size must be 1 to 1000, --clients and --slices at least 1, --seconds positive, "
                               "--prefill not negative")
        # A SIGTERM ends the command through its finally blocks, so the processes it started stop too.
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
        plan = Plan(clients=options["clients"], seconds=options["seconds"], workers=options["workers"],
                    bulk_size=options["bulk_size"], accounts=options["accounts"], rounds=options["rounds"],
                    lag_seconds=options["lag_seconds"], broker=options["broker"],
                    cache=options["cache"], slices=options["slices"], prefill=options["prefill"])
        # Two runs at once would share the database, the Redis databases and the machine's cores, and
        # measure each other: a second run waits for the first.
        with open(Path(tempfile.gettempdir()) / "baccarat-bench-intake.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.stderr.write("bench_intake: another run is in progress on this machine; waiting for it")
                fcntl.flock(lock, fcntl.LOCK_EX)
            if options["url"]:
                run_nodes(options["url"], plan, say=self.stderr.write, write=self.stdout.write)
            else:
                run(plan, say=self.stderr.write, write=self.stdout.write)
