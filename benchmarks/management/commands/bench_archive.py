"""manage.py bench_archive: whole months archived and restored while bets arrive (PostgreSQL only)."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from audit import partitioning
from audit.management.commands.partitions import before_date
from benchmarks import archive
from benchmarks.pages import database

HELP = """\
On the pages benchmark's database (``<name>_pages_bench``, built by ``bench_pages`` without --drop),
with gunicorn serving it and one game server placing single bets through the API one after another
all along: archive every whole month before --before into --to (partitions archive), drop the
detached tables, restore every file written (partitions restore). Prints the archive's and the
restore's time, the rows and file sizes per table, and the bets' p50 / p99 / max before, during the
archive, during the restore and after. Fails if a bet did not answer 201.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_pages_bench \\
        python manage.py bench_archive --before 2026-12-01 --to /var/tmp/archive
"""


class Command(BaseCommand):
    help = HELP

    def add_arguments(self, parser):
        parser.add_argument("--before", type=before_date, required=True, help="YYYY-MM-DD: the months before it")
        parser.add_argument("--to", required=True, help="an empty directory for the files")
        parser.add_argument("--settle", type=float, default=10.0,
                            help="seconds of bets before the archive and after the restore (default 10)")

    def handle(self, *args, before, to, settle, **options):
        name = database.bench_database_name(settings.DATABASES["default"]["NAME"])
        directory = Path(to)
        if directory.exists() and any(directory.iterdir()):
            raise CommandError(f"{directory} is not empty")
        database.switch_to(name)
        if not partitioning.connection_is_owner():
            raise CommandError("bench_archive runs as the tables' owner (the archive detaches partitions)")
        ok = archive.run(database.database_url(name), before=before, to=directory, settle_seconds=settle,
                         say=self.stderr.write, write=self.stdout.write)
        if not ok:
            raise CommandError("some bets did not answer 201 (above)")
