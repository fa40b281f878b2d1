"""manage.py bench_sequencer: how long the sequencer takes over a backlog of pending events."""

import time

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from audit import merkle
from audit.chain import HASHED_FIELDS, leaf_entry
from audit.models import AuditEvent
from audit.sequencer import sequence_pending
from benchmarks.database import prepare_database

HELP = """\
Write EVENTS audit events in one transaction (a backlog, as an upgrade or a stopped sequencer leaves
it), then sequence them all (audit.sequencer.sequence_pending) and print the time beside its floor,
measured in the same run: one read of those events in id order with their leaf hashes computed,
which any sequencer must do. The events stay in the log (it is append-only), so it runs only on a
database whose name ends in "bench" (or with --force), which it creates and migrates when needed:

    DATABASE_URL=postgres://…/baccarat_sequencer_bench python manage.py bench_sequencer --events 200000
"""


class Command(BaseCommand):
    help = HELP

    def add_arguments(self, parser):
        parser.add_argument("--events", type=int, default=200_000, help="pending events (default 200000)")
        parser.add_argument("--force", action="store_true", help="run on a database not named *bench")

    def handle(self, *args, events, force, **options):
        if not force and not connection.settings_dict["NAME"].endswith("bench"):
            raise CommandError("bench_sequencer adds events to the audit log for good: run it on a database whose "
                               "name ends in 'bench', or pass --force.")
        prepare_database(self.stdout.write)
        sequence_pending()  # what was pending before is not part of the measurement
        first = (AuditEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0) + 1
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO games_auditevent (created_at, actor, action, object_type, object_id, after, reason, "
                "request_id) SELECT now(), 'system:bench', 'bet.accepted', 'bet', n::text, "
                "jsonb_build_object('stake', '10.00', 'n', n), '', '' FROM generate_series(1, %s) AS n", [events])
        started = time.perf_counter()
        rows = AuditEvent.objects.filter(id__gte=first).order_by("id").values("id", *HASHED_FIELDS)
        hashed = sum(1 for row in rows.iterator(chunk_size=5000) if merkle.leaf_hash(leaf_entry(row)))
        floor = time.perf_counter() - started
        started = time.perf_counter()
        sequenced = sequence_pending()
        elapsed = time.perf_counter() - started
        if sequenced != events or hashed != events:
            raise CommandError(f"sequenced {sequenced} and read {hashed} of the {events} events written")
        self.stdout.write(f"sequencer: {events} pending events in {elapsed:.2f} s ({events / elapsed:,.0f} events/s); "
                          f"floor (read and hash them once): {floor:.2f} s; sequencer / floor = {elapsed / floor:.1f}")
