"""What each shortcut around the framework gains against its off-switch, measured in one run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_shortcuts_bench \\
        python manage.py bench_shortcuts [--units 400] [--slices 5] [--only SETTING,...]

Drops and re-creates the configured database (its name must end in "bench"). The code and what it
measures: benchmarks.shortcuts; the decision records in docs/decisions/ quote its figures.
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from benchmarks.shortcuts import SHORTCUTS, run


class Command(BaseCommand):
    help = "Each shortcut's CPU, wall time and statements per unit of work, on and off, in one run."

    def add_arguments(self, parser):
        parser.add_argument("--units", type=int, default=400, help="bets per slice and side (default 400)")
        parser.add_argument("--slices", type=int, default=5, help="on/off slices taken in turn (default 5)")
        parser.add_argument("--accounts", type=int, default=200, help="default 200")
        parser.add_argument("--bulk-size", type=int, default=100, help="bets a bulk request (default 100)")
        parser.add_argument("--only", default="", help="comma-separated settings to measure (default: all)")

    def handle(self, *args, **options):
        only = [item.strip() for item in options["only"].split(",") if item.strip()]
        unknown = set(only) - {shortcut.setting for shortcut in SHORTCUTS}
        if unknown:
            raise CommandError(f"--only: no shortcut is switched by {', '.join(sorted(unknown))}")
        name = connection.settings_dict["NAME"] or ""
        if not name.endswith("bench"):
            raise CommandError(f"bench_shortcuts drops and re-creates the database it runs on, and {name!r} does "
                               "not end in 'bench'. Use a database of its own, e.g. "
                               "DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_shortcuts_bench.")
        if options["units"] < 1 or options["slices"] < 1 or not 1 <= options["bulk_size"] <= 1000:
            raise CommandError("--units and --slices must be at least 1, --bulk-size 1 to 1000")
        run(units=options["units"], slices=options["slices"], accounts=options["accounts"],
            bulk_size=options["bulk_size"], only=only, say=self.stderr.write, write=self.stdout.write)
