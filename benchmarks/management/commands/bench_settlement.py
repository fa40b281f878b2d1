"""manage.py bench_settlement: the options of the settlement benchmark (benchmarks.settlement)."""

from argparse import RawDescriptionHelpFormatter

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from benchmarks.settlement.data import SIDE_BETS_SHARE
from benchmarks.settlement.run import Plan, run

HELP = """\
Benchmark settlement on PostgreSQL: bets settled per second by the real worker path (a Celery
worker process running settlement.sweep), next to (a) the floor, one set-based SQL statement doing
the minimum equivalent writes, and (b) a naive row-by-row ORM loop (measured on a sample), each on
the same freshly generated data set (generation is not timed): main bets (45 % Player, 45 % Banker,
10 % Tie) and side bets (20 % of all bets unless --side-bets says otherwise, spread evenly over
every side bet type, each with its paytable). It prints wall-clock bets/s, bets per CPU second (the
Python process plus its database backend: steadier on a busy machine), the ratios worker/floor
(target >= 0.50) and worker/naive (target >= 20x), the worker's peak memory (VmHWM) at two sizes,
and an exactly-once check of the worker's result from the database.

The command WIPES every table of the audit, wallet, games and settlement apps (games, rounds, bets,
accounts, ledger, batches, audit events, aggregates), so it runs only on a database whose name ends
in "bench" (or with --force). It creates that database and migrates it when it does not exist. It
needs PostgreSQL and a broker (Redis database 14 by default):

    SECRET_KEY=bench DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_bench \\
        python manage.py bench_settlement --bets 200000

(by hand, the same: createdb -h 127.0.0.1 -U postgres baccarat_bench; DATABASE_URL=... python
manage.py migrate; then the command above). The worker runs with --pool=solo, a single process
whose /proc/<pid>/status holds its peak memory; SETTLEMENT_BATCH_ROUNDS in the environment (or
--batch-rounds) sets the size of its batches. On a busy machine, --repeat 3 compares the best of
three runs of each.

--prefill N measures (a), (b) and (c) beside N settled bets of the past, on a game and accounts of
their own (benchmarks.settlement.history): the data set is built once, the history written beside
it, and before each measurement the last one's settlement of the data set is undone in place (its
rows then equal the build's, or the run stops). The worker's memory at the other sizes is measured
without the history.
"""


def memory_sizes(text: str, bets: int) -> list:
    if not text:
        return sorted({max(1, bets // 4), bets})
    try:
        sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise CommandError("--memory-sizes takes bet counts separated by commas, e.g. 50000,200000") from None
    if len(sizes) < 2 or sizes[0] < 1:
        raise CommandError("--memory-sizes needs at least two positive bet counts.")
    return sizes


class Command(BaseCommand):
    help = HELP

    def create_parser(self, prog_name, subcommand, **kwargs):
        kwargs["formatter_class"] = RawDescriptionHelpFormatter
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--bets", type=int, default=200_000, help="bets in the data set (default 200000)")
        parser.add_argument("--bets-per-round", type=int, default=50, help="default 50")
        parser.add_argument("--accounts", type=int, default=1000, help="default 1000")
        parser.add_argument("--workers", type=int, default=1, help="worker processes for the worker path (default 1)")
        parser.add_argument("--naive-sample", type=int, default=5000,
                            help="bets the naive loop settles (it is slow; default 5000)")
        parser.add_argument("--memory-sizes", default="",
                            help="bet counts at which to measure the worker's peak memory, comma-separated "
                                 "(default: BETS/4 and BETS)")
        parser.add_argument("--broker", default="redis://127.0.0.1:6379/14",
                            help="Celery broker for the worker (default redis://127.0.0.1:6379/14)")
        parser.add_argument("--batch-rounds", type=int, default=None,
                            help="SETTLEMENT_BATCH_ROUNDS for the worker (default: the setting, 200 unless the "
                                 "environment sets it)")
        parser.add_argument("--side-bets", type=float, default=SIDE_BETS_SHARE,
                            help="the share of bets that are side bets, from 0 to 1, spread evenly over every "
                                 f"side bet type; the rest are main bets (default {SIDE_BETS_SHARE})")
        parser.add_argument("--seed", type=int, default=42, help="seed of the data set (default 42)")
        parser.add_argument("--repeat", type=int, default=1,
                            help="measure (a), (b) and (c) this many times each, on fresh data every time, and "
                                 "compare the best of each: on a busy machine one run can be disturbed "
                                 "(default 1)")
        parser.add_argument("--prefill", type=int, default=0, metavar="BETS",
                            help="settled bets of the past beside the data set, written once (default 0: none)")
        parser.add_argument("--force", action="store_true",
                            help="run on a database whose name does not end in 'bench' (its data is WIPED)")

    def handle(self, *args, **options):
        counts = ("bets", "bets_per_round", "accounts", "workers", "repeat", "naive_sample")
        if min(options[name] for name in counts) < 1:
            raise CommandError("--bets, --bets-per-round, --accounts, --workers, --naive-sample and --repeat "
                               "must be at least 1.")
        if options["prefill"] < 0:
            raise CommandError("--prefill is a number of bets, 0 or more.")
        if not 0 <= options["side_bets"] <= 1:
            raise CommandError("--side-bets is a share of the bets, from 0 to 1 (e.g. 0.2).")
        plan = Plan(
            bets=options["bets"], bets_per_round=options["bets_per_round"], accounts=options["accounts"],
            workers=options["workers"], naive_sample=options["naive_sample"],
            memory_sizes=memory_sizes(options["memory_sizes"], options["bets"]), broker=options["broker"],
            batch_rounds=options["batch_rounds"] or settings.SETTLEMENT_BATCH_ROUNDS, seed=options["seed"],
            repeat=options["repeat"], side_bets=options["side_bets"], prefill=options["prefill"],
        )
        run(plan, force=options["force"], say=self.say)

    def say(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()
