"""Recompute the daily aggregates from the raw rounds and bets, and say where the stored ones differ.

    manage.py rebuild_aggregates [--check] [--database ALIAS]

Both ways compare first, set-based (the raw data's aggregates EXCEPT the stored rows, and back).
With --check nothing is written and the command fails (exit status 1) when any table differs;
without it the stored aggregates are replaced by the recomputed ones in one transaction.
"""

from time import perf_counter

from django.core.management.base import BaseCommand, CommandError
from django.db import DEFAULT_DB_ALIAS

from settlement import aggregates


def describe(value) -> str:
    return ", ".join(f"{name}={value[name]}" for name in value)


class Command(BaseCommand):
    help = "Recompute the daily aggregates from the raw data; --check only compares and fails on a difference."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true",
                            help="compare only: write nothing, exit 1 when the stored aggregates differ")
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS, help="the database alias (default: default)")

    def handle(self, *args, **options):
        started = perf_counter()
        results = aggregates.check(using=options["database"])
        for result in results:
            if result.agrees:
                self.stdout.write(f"{result.label}: {result.stored:,} rows stored, {result.computed:,} from the raw "
                                  "data: agree")
                continue
            self.stdout.write(f"{result.label}: {result.stored:,} rows stored, {result.computed:,} from the raw data: "
                              f"{result.missing + result.unexpected:,} rows differ ({result.missing:,} as the raw "
                              f"data gives them are not stored, {result.unexpected:,} stored are not what it gives)")
            for side, row in result.samples:
                what = "raw data gives" if side == "missing" else "stored        "
                self.stdout.write(f"    {what}  {describe(row)}")
        differing = [result.label for result in results if not result.agrees]
        checked = f"checked in {perf_counter() - started:.2f} s"
        if options["check"]:
            if differing:
                raise CommandError(f"the stored aggregates differ from the raw data: {', '.join(differing)} "
                                   f"({checked}); run rebuild_aggregates to recompute them", returncode=1)
            self.stdout.write(f"The aggregates agree with the raw data ({checked}).")
            return
        started = perf_counter()
        counts = aggregates.rebuild(using=options["database"])
        rows = ", ".join(f"{label} {count:,}" for label, count in counts.items())
        self.stdout.write(f"Rebuilt from the raw data in {perf_counter() - started:.2f} s: {rows} rows.")
