"""manage.py partitions ensure | compact | archive | restore (audit.partitioning)."""

from datetime import date
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from audit import partitioning
from core.errors import ApplicationError
from dbutils.ddl_locks import LocksBusy
from dbutils.partitions import ArchiveError

HELP = """\
Partition maintenance of the tables partitioned by month, as the tables' owner (run it with the
owner's DATABASE_URL, MIGRATION_DATABASE_URL in production):

  ensure                              this month's partitions and the next two's (writers go on)
  compact                             build again, packed, the indexes of every month ended
                                      PARTITIONS_COMPACT_AFTER_DAYS ago or more and not yet compacted
                                      (writers go on); an audit event names each month
  archive --to DIR [--before DATE]    detach every whole month before DATE (default: all but the
                                      RETENTION_MONTHS_ONLINE months kept online) into DIR: a gzip
                                      COPY file and a manifest per month; an audit event carries the
                                      manifests. Nothing is deleted (the tables wait in the schema
                                      "archived")
  restore FILE...                     attach archived months again, each file checked against its
                                      manifest
"""


def before_date(text: str) -> date:
    """--before's type (bench_archive's too): a date as YYYY-MM-DD."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--before takes a date as YYYY-MM-DD, not {text!r}") from None


class Command(BaseCommand):
    help = HELP

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("ensure", help="make the partitions of this month and the next two")
        actions.add_parser("compact", help="build the indexes of the closed months again, packed")
        archive = actions.add_parser("archive", help="detach whole months into files")
        archive.add_argument("--before", type=before_date, help="YYYY-MM-DD: every whole month before it")
        archive.add_argument("--to", required=True, metavar="DIR", help="where the files go")
        restore = actions.add_parser("restore", help="attach archived months again")
        restore.add_argument("files", nargs="+", metavar="FILE", help="X.copy.gz or its X.json")

    def handle(self, *args, action, **options):
        if not partitioning.connection_is_owner():
            raise CommandError("partitions runs as the tables' owner: set DATABASE_URL to the owner's URL "
                               "(MIGRATION_DATABASE_URL in production)")
        try:
            getattr(self, f"_{action}")(**options)
        except (ApplicationError, ArchiveError, LocksBusy, OSError) as error:
            raise CommandError(str(error)) from None

    def _ensure(self, **options):
        made = partitioning.partitions_ensure()
        self.stdout.write(f"made {', '.join(made)}" if made else "every partition needed is there")

    def _compact(self, **options):
        compacted = partitioning.partitions_compact()
        for done in compacted:
            before, after = done["index_bytes_before"] / 2**20, done["index_bytes_after"] / 2**20
            self.stdout.write(f"compacted {done['partition']}: its indexes {before:,.1f} MB, then {after:,.1f} MB")
        if not compacted:
            self.stdout.write("no closed month left to compact")

    def _archive(self, *, before, to, **options):
        before = before or partitioning.retention_start()
        archived = partitioning.partitions_archive(before=before, to=Path(to))
        for manifest in archived.manifests:
            self.stdout.write(f"archived {manifest['partition']} ({manifest['month']}, {manifest['rows']} rows) to "
                              f"{Path(to) / manifest['file']}, SHA-256 {manifest['sha256']}")
        for table, kept in archived.kept_online.items():
            self.stdout.write(f"kept online: {table} from {kept['from']} on, as {kept['why']}")
        if not archived.manifests:
            self.stdout.write(f"no whole month before {before} to archive")

    def _restore(self, *, files, **options):
        for manifest in partitioning.partitions_restore(files=files):
            self.stdout.write(f"restored {manifest['partition']} ({manifest['month']}, {manifest['rows']} rows)")
