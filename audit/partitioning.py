"""Partition maintenance of the tables partitioned by month (dbutils.partitions), with the audit
trail vouching for every archive: ``python manage.py partitions ensure | compact | archive | restore``.

Run as the tables' owner (the application role can neither attach nor detach). Nothing is ever
deleted: an archived month is detached into the schema ``archived`` and written to a checked file.
"""

import json
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Exists, OuterRef
from psycopg import sql

from audit.archives import archived_manifests
from audit.choices import AuditAction
from audit.models import AuditEvent, AuditLeaf
from audit.sequencer import sequence_pending
from audit.services import audit_record
from core.errors import Conflict
from dbutils import index_rebuilds, partitions
from dbutils.ddl_locks import LocksBusy

# The tables partitioned by month, in archive order: a table before any table it references (the
# ledger's entries reference the bets); restored the other way round. Named, not imported: the
# ledger (wallet) and the bets (games) belong to apps above this one.
PARTITIONED_TABLES = [
    "settlement_ledgerentry",
    "games_bet",
    AuditEvent._meta.db_table,
]
# How far a table's months may go when the others' go before ``before``, asked by the app above this
# one that owns the table (its AppConfig.ready registers it): {table: (before, using) -> (the first
# month kept online, why)}. The bets' hold: unsettled bets, and bets paid in a month kept online.
ARCHIVE_HOLDS: dict = {}
MONTHS_AHEAD = 2
ACTOR = "system:partitions"
ADVISORY_LOCK = 0x70617274  # "part": one archive, restore or compaction at a time


def months_before(today: date, months: int) -> date:
    """The first day of the month ``months`` months before ``today``'s."""
    index = today.year * 12 + today.month - 1 - months
    return date(index // 12, index % 12 + 1, 1)


def retention_start(today: date | None = None) -> date:
    """The first month kept online: RETENTION_MONTHS_ONLINE months, this one included."""
    return months_before(today or date.today(), settings.RETENTION_MONTHS_ONLINE - 1)


def partitions_ensure(*, today: date | None = None, using: str = DEFAULT_DB_ALIAS) -> list:
    """Every registered table's partitions of this month and MONTHS_AHEAD more; the names made. A
    table whose locks stay busy does not keep the others from theirs; its LocksBusy is raised after."""
    made, busy = [], []
    for table in PARTITIONED_TABLES:
        try:
            made += partitions.ensure(table, ahead=MONTHS_AHEAD, today=today, using=using)
        except LocksBusy as error:
            busy.append(error)
    if busy:
        raise busy[0]
    return made


def months_ahead(table: str, *, today: date | None = None, using: str = DEFAULT_DB_ALIAS) -> int:
    """How many months after this one ``table`` has partitions for, without a gap."""
    present, month, ahead = partitions.month_partitions(table, using=using), (today or date.today()), 0
    month = partitions.next_month(month.replace(day=1))
    while month in present:
        ahead, month = ahead + 1, partitions.next_month(month)
    return ahead


def partitions_compact(*, today: date | None = None, using: str = DEFAULT_DB_ALIAS) -> list:
    """The indexes of every month of the partitioned tables that ended PARTITIONS_COMPACT_AFTER_DAYS
    or more before ``today`` built again, packed (index_rebuilds.rebuild: writers go on), once: a
    ``partitions.compacted`` event names each month done, with its index bytes before and after. What
    those events say, as dicts."""
    compacted = []
    with _one_at_a_time(using):
        for table, month, name in _months_to_compact(today or date.today(), using):
            before, after = index_rebuilds.rebuild(name, using=using)
            facts = {"table": table, "month": f"{month:%Y-%m}", "index_bytes_before": before,
                     "index_bytes_after": after}
            with transaction.atomic(using=using):
                audit_record(actor=ACTOR, action=AuditAction.PARTITION_COMPACTED, object_type="partition",
                             object_id=name, after=facts)
            compacted.append({"partition": name, **facts})
    return compacted


def _months_to_compact(today: date, using: str) -> list:
    """(table, month, partition) of each month closed PARTITIONS_COMPACT_AFTER_DAYS before ``today``
    that no ``partitions.compacted`` event names yet (read under the one-at-a-time lock)."""
    done = set(AuditEvent.objects.using(using).filter(action=AuditAction.PARTITION_COMPACTED)
               .values_list("object_id", flat=True))
    return [(table, month, name) for table in PARTITIONED_TABLES
            for month, name in sorted(partitions.month_partitions(table, using=using).items())
            if name not in done
            and (today - partitions.next_month(month)).days >= settings.PARTITIONS_COMPACT_AFTER_DAYS]


def _unsequenced_events_remain(before: date, using: str) -> bool:
    """Whether an event of the months before ``before`` is still without a leaf (it would leave the
    log). NOT EXISTS, an anti-join: a NOT IN over the leaves, too many to hash in work_mem, looked
    them up event by event (over 11 minutes for a million events)."""
    sequence_pending(using)
    has_leaf = AuditLeaf.objects.using(using).filter(event_id=OuterRef("pk"))
    return AuditEvent.objects.using(using).filter(
        id__gte=partitions.legacy_end(AuditEvent._meta.db_table, using=using),
        id__lt=partitions.month_start_id(before)).filter(~Exists(has_leaf)).exists()


@dataclass(frozen=True)
class Archived:
    manifests: list  # of the files written, as their manifests say
    kept_online: dict  # {table: {"from": "yyyy-mm", "why": ...}}: months before ``before`` a hold kept


def partitions_archive(*, before: date, to, using: str = DEFAULT_DB_ALIAS) -> Archived:
    """Archive every whole month before ``before`` of every registered table to ``to``, but for the
    months a table's hold keeps online, and record one audit event carrying the manifests (the signed
    log vouches for each file's SHA-256) and what was kept. Never the current month; refused while an
    event of those months has no leaf yet, or while another archive or restore runs."""
    if before > date.today().replace(day=1):
        raise Conflict("before", "Only whole months that have ended can be archived.")
    if _unsequenced_events_remain(before, using):
        raise Conflict("before", "Events of those months are not sequenced yet: run the sequencer first.")
    ends, kept_online = {}, {}
    for table, hold in ARCHIVE_HOLDS.items():
        ends[table], why = hold(before, using)
        if ends[table] < before:
            kept_online[table] = {"from": f"{ends[table]:%Y-%m}", "why": why}
    with _one_at_a_time(using):
        in_log = archived_manifests(using=using)
        recorded = {manifest["partition"] for manifest in in_log.values()}
        written = []
        try:
            for table in PARTITIONED_TABLES:
                written += [manifest.as_json() for manifest in partitions.archive(
                    table, before=ends.get(table, before), to=to, recorded=recorded, using=using)]
        except BaseException:
            _record_archived(before, to, kept_online, written, in_log, using)  # the files written before it stopped
            raise
        return Archived(manifests=_record_archived(before, to, kept_online, written, in_log, using),
                        kept_online=kept_online)


@contextmanager
def _one_at_a_time(using: str):
    """One archive, restore or compaction at a time (a restore stages its months where an archive
    keeps its own; a compaction rebuilds what they detach and attach): a session advisory lock, on
    the owner's direct connection."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [ADVISORY_LOCK])
        if not cursor.fetchone()[0]:
            raise Conflict("partitions", "Another archive, restore or compaction is running: run this one after it.")
        try:
            yield
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [ADVISORY_LOCK])


def _record_archived(before: date, directory, kept_online: dict, written: list, in_log: dict, using: str) -> list:
    """One ``partitions.archived`` event carrying the manifests of months detached from their table
    that the log (``in_log``) does not name as archived: those this run wrote, and those in
    ``directory`` of a run (this one, or one before) that stopped before its event. The manifests."""
    mine = {manifest["partition"] for manifest in written}
    manifests = sorted(written + _unrecorded_manifests(directory, in_log, using, skip=mine),
                       key=lambda m: (PARTITIONED_TABLES.index(m["table"]), m["id_from"]))
    if manifests:
        with transaction.atomic(using=using):
            audit_record(actor=ACTOR, action=AuditAction.PARTITIONS_ARCHIVED, object_type="partition",
                         object_id=f"before {before:%Y-%m}", after={"manifests": manifests, "kept_online": kept_online})
    return manifests


def _unrecorded_manifests(directory, in_log: dict, using: str, *, skip=frozenset()) -> list:
    """Manifests only of months detached into the archive schema (a file copied in from elsewhere
    names none of them), in the file the archive names after the month's partition, of the id range
    that month has, not archived in the log (``in_log``) since, and checked: the file's SHA-256 and
    the detached table's row count are the manifest's. None of the partitions in ``skip``."""
    in_log = {(table, partitions.month_of_id(low)) for table, low, _high in in_log}
    found = []
    with connections[using].cursor() as cursor:
        detached = {table: partitions.archived_partitions(cursor, table) for table in PARTITIONED_TABLES}
        for path in Path(directory).glob("*.json"):
            try:
                manifest = partitions.Manifest(**json.loads(path.read_text())).as_json()
                table, month = manifest["table"], date.fromisoformat(f"{manifest['month']}-01")
                ours = (detached.get(table, {}).get(month) == manifest["partition"]
                        and path.name == f"{manifest['partition']}.json"
                        and manifest["id_from"] == partitions.month_start_id(month))
            except (ValueError, TypeError, OSError):
                continue  # not a manifest at all
            if not ours or (table, month) in in_log or manifest["partition"] in skip:
                continue
            try:
                partitions.read_manifest(path)  # the file's SHA-256
            except (partitions.ArchiveError, OSError):
                continue  # the next archive writes it afresh
            rows = cursor.cursor.execute(sql.SQL("SELECT count(*) FROM {}").format(
                sql.Identifier(partitions.ARCHIVE_SCHEMA, manifest["partition"]))).fetchone()[0]
            if rows == manifest["rows"]:
                found.append(manifest)
    return found


def partitions_restore(*, files: list, using: str = DEFAULT_DB_ALIAS) -> list:
    """Attach the archived months of ``files`` again (each checked against its manifest) and record
    one audit event carrying their manifests, also for those attached before a failure. A
    referenced table's months first (the bets before the ledger entries whose foreign key attaching
    checks), whatever the order of ``files``."""
    order = {table: n for n, table in enumerate(reversed(PARTITIONED_TABLES))}
    files = sorted(files, key=lambda file: order.get(partitions.read_manifest_table(file), len(order)))
    restored = []
    with _one_at_a_time(using):
        try:
            for file in files:
                restored.append(partitions.restore(file, using=using).as_json())
        finally:
            if restored:
                with transaction.atomic(using=using):
                    audit_record(actor=ACTOR, action=AuditAction.PARTITIONS_RESTORED, object_type="partition",
                                 object_id=", ".join(m["partition"] for m in restored)[:64],
                                 after={"manifests": restored})
    return restored


def connection_is_owner(using: str = DEFAULT_DB_ALIAS) -> bool:
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = %s::regclass), "
                       "'USAGE')", [AuditEvent._meta.db_table])
        return cursor.fetchone()[0]
