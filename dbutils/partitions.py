"""Monthly partitions of tables partitioned by RANGE (id), whose ids carry their month.

The scheme (docs/architecture/partitioning.md): an id is ``months since EPOCH_YEAR << MONTH_SHIFT``
plus a sequence number (below 2**53, so JSON clients read it exactly), so a month's rows are the id
range ``[month_start_id(month), month_start_id(next month))``, every lookup by id prunes to one
partition, and ``id`` alone stays a primary key PostgreSQL accepts (it is the partition key). The
partition of month 2026-12 of ``games_bet`` is ``games_bet_p202612``; rows written before the table
was partitioned live in ``<table>_legacy`` (ids below every month's), which is never a month.

- ``ensure``: the partitions of this month and ``ahead`` more, each made as a table of its own and
  then attached (ATTACH takes SHARE UPDATE EXCLUSIVE on the parent: writers and readers go on; a
  CREATE TABLE … PARTITION OF would take ACCESS EXCLUSIVE), under a lock timeout so that it never
  queues writers behind it for long.
- ``archive``: every whole month before a date is detached (CONCURRENTLY: writers go on; a month of
  a table that others' foreign keys reference, in a moment under locks instead: _detach), written to
  ``<partition>.copy.gz`` (COPY text format, gzip) beside a manifest ``<partition>.json`` (table,
  partition, id range, month, columns, row count, SHA-256 of the file), and the detached table is
  moved to the schema ARCHIVE_SCHEMA, where no application role reads it. Nothing is deleted:
  dropping an archived table is an operator's decision once the file is stored.
- ``restore``: a file checked against its manifest (SHA-256, row count) is loaded into a table of
  its own and attached again (or the table still in ARCHIVE_SCHEMA is attached back).

The caller records the manifests as audit events; this module imports nothing of ours outside dbutils.
"""

import gzip
import hashlib
import json
import re
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from psycopg import sql

from dbutils import ddl_locks

MONTH_SHIFT = 40  # 2**40 ids a month; below 2**53 (exact in JavaScript) until 2682
EPOCH_YEAR = 2000
ARCHIVE_SCHEMA = "archived"
COPY_CHUNK = 1 << 20
# gzip's own default: a month's bets, ledger and events compress 3-5 times faster than at 9, into files
# 5-16 % larger (measured on the pages benchmark's data).
COMPRESS_LEVEL = 6
_PARTITION_NAME = re.compile(r"^(?P<table>\w+)_p(?P<month>\d{6})$")


def month_start_id(month: date) -> int:
    """The first id of ``month`` (its day is ignored)."""
    return ((month.year - EPOCH_YEAR) * 12 + month.month - 1) << MONTH_SHIFT


def month_id_sql(moment: str, sequence: str) -> str:
    """SQL of the id of a row written at the timestamp expression ``moment``: its month (UTC) above
    MONTH_SHIFT and the next number of ``sequence`` below (the tables' default takes ``now()``)."""
    if not re.fullmatch(r"\w+", sequence):
        raise ValueError(f"not a sequence name: {sequence!r}")
    month = f"(({moment}) AT TIME ZONE 'UTC')"
    return (f"((((extract(year from {month})::int - {EPOCH_YEAR}) * 12 + extract(month from {month})::int - 1)"
            f"::bigint << {MONTH_SHIFT}) + nextval('{sequence}'))")


def month_of_id(value: int) -> date:
    index = value >> MONTH_SHIFT
    return date(EPOCH_YEAR + index // 12, index % 12 + 1, 1)


def next_month(month: date) -> date:
    return date(month.year + month.month // 12, month.month % 12 + 1, 1)


def partition_name(table: str, month: date) -> str:
    return f"{table}_p{month.year:04d}{month.month:02d}"


@dataclass(frozen=True)
class Manifest:
    table: str
    partition: str
    month: str  # yyyy-mm
    id_from: int  # inclusive
    id_to: int  # exclusive
    columns: list
    rows: int
    sha256: str  # of the compressed file
    file: str  # its name, beside the manifest

    def as_json(self) -> dict:
        return asdict(self)


def _identifier(*parts: str) -> sql.Identifier:
    return sql.Identifier(*parts)


def _execute(cursor, statement, params=None):
    raw = cursor.cursor  # psycopg's own cursor: composed statements, COPY
    raw.execute(statement, params)
    return raw


def month_partitions(table: str, *, using: str = DEFAULT_DB_ALIAS) -> dict:
    """{month: partition name} of the monthly partitions attached to ``table``."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                       "WHERE i.inhparent = %s::regclass", [table])
        found = {}
        for (name,) in cursor.fetchall():
            match = _PARTITION_NAME.match(name)
            if match and match["table"] == table:
                found[date(int(match["month"][:4]), int(match["month"][4:]), 1)] = name
        return found


def own_foreign_keys(cursor, table: str) -> list:
    """[(name, definition)] of ``table``'s own foreign keys, not the clones PostgreSQL keeps for it
    per partition of a partitioned table (``conparentid``)."""
    return _execute(cursor, "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                            "WHERE conrelid = %s::regclass AND contype = 'f' AND conparentid = 0", [table]).fetchall()


def _create_and_attach(table: str, name: str, month: date, using: str) -> None:
    """ATTACH checks the empty partition against the keys of the tables ``table`` references and
    gives the tables referencing ``table`` their triggers on it: SHARE ROW EXCLUSIVE on both, taken
    first (ddl_locks)."""
    low, high = month_start_id(month), month_start_id(next_month(month))

    def create_and_attach(cursor):
        _execute(cursor, sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING DEFAULTS INCLUDING CONSTRAINTS "
                                 "INCLUDING GENERATED INCLUDING STORAGE)").format(
            _identifier(name), _identifier(table)))
        _range_check(cursor, _identifier(name), name, low, high)
        _attach(cursor, table, name, low, high)

    with connections[using].cursor() as cursor:
        foreign = ddl_locks.referenced_tables(cursor, table) + ddl_locks.referencing_tables(cursor, table)
    ddl_locks.run_locked(create_and_attach, locks=dict.fromkeys(foreign, ddl_locks.SHARE_ROW_EXCLUSIVE), using=using)


def _range_check(cursor, relation: sql.Composable, name: str, low: int, high: int) -> None:
    """A CHECK on ``relation`` (the table that becomes partition ``name``) that proves its range, so
    that ATTACH reads no row (it scans the table: done before the attach takes its locks)."""
    check = _identifier(f"{name}_range")
    _execute(cursor, sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(relation, check))
    _execute(cursor, sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} CHECK (id >= {} AND id < {})").format(
        relation, check, sql.Literal(low), sql.Literal(high)))


def _attach(cursor, table: str, name: str, low: int, high: int) -> None:
    """ATTACH of ``name``, which has its range's CHECK (then redundant, so dropped)."""
    _execute(cursor, sql.SQL("ALTER TABLE {} ATTACH PARTITION {} FOR VALUES FROM ({}) TO ({})").format(
        _identifier(table), _identifier(name), sql.Literal(low), sql.Literal(high)))
    _execute(cursor, sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
        _identifier(name), _identifier(f"{name}_range")))


def _build_parent_indexes(cursor, table: str, staged: str) -> None:
    """The indexes of ``table`` that ``staged`` (a regclass name) lacks, built on it before it becomes
    a partition: ATTACH takes equal ones as the partition's instead of building them, which it would
    do while holding its locks (a restored month's ledger held the accounts and the bets for 21 s).
    A table loaded from a file has none yet; one kept since its detach lacks those added since. An
    index behind a primary key or unique constraint is made as that constraint, as ATTACH asks."""
    def constraints(relation: str) -> list:
        return [definition for (definition,) in _execute(
            cursor, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass "
                    "AND contype IN ('p', 'u') AND conparentid = 0", [relation]).fetchall()]

    def indexes(relation: str) -> list:  # (unique, "USING btree (columns)"), the name left out
        return [(unique, definition.split(" USING ", 1)[1]) for unique, definition in _execute(
            cursor, "SELECT i.indisunique, pg_get_indexdef(i.indexrelid) FROM pg_index i WHERE i.indrelid = "
                    "%s::regclass AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid)",
            [relation]).fetchall()]

    relation = sql.SQL(".").join(map(sql.Identifier, staged.split(".", 1)))
    present = set(constraints(staged))
    for constraint in constraints(table):
        if constraint not in present:
            _execute(cursor, sql.SQL("ALTER TABLE {} ADD {}").format(relation, sql.SQL(constraint)))
    present = set(indexes(staged))
    for unique, using in indexes(table):
        if (unique, using) not in present:
            _execute(cursor, sql.SQL("CREATE {}INDEX ON {} USING {}").format(
                sql.SQL("UNIQUE " if unique else ""), relation, sql.SQL(using)))


def legacy_end(table: str, *, using: str = DEFAULT_DB_ALIAS) -> int:
    """The first id above the legacy partition of ``table`` (0 if it has none)."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE oid = to_regclass(%s)",
                       [f"{table}_legacy"])
        found = cursor.fetchone()
    bound = re.search(r"TO \('?(-?\d+)'?\)", found[0]) if found and found[0] else None
    return int(bound[1]) if bound else 0


def move_legacy_end(table: str, end: int, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Make the legacy partition of ``table`` end at the id ``end``: detached, then attached again
    (which checks that its rows fit), so that months before the one the table was converted in can
    be attached, as a database holding rows of earlier months needs (a benchmark's, a test's)."""
    legacy = _identifier(f"{table}_legacy")
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        _execute(cursor, sql.SQL("ALTER TABLE {} DETACH PARTITION {}").format(_identifier(table), legacy))
        _execute(cursor, sql.SQL("ALTER TABLE {} ATTACH PARTITION {} FOR VALUES FROM (MINVALUE) TO ({})").format(
            _identifier(table), legacy, sql.Literal(end)))


def ensure(table: str, *, ahead: int = 2, today: date | None = None, using: str = DEFAULT_DB_ALIAS) -> list:
    """Attach the partitions of the current month and ``ahead`` months after it that are missing
    (and not within the legacy partition); their names. Each is made in a transaction of its own."""
    month = (today or date.today()).replace(day=1)
    present = month_partitions(table, using=using)
    legacy = legacy_end(table, using=using)
    made = []
    for _ in range(ahead + 1):
        if month not in present and month_start_id(month) >= legacy:
            name = partition_name(table, month)
            _create_and_attach(table, name, month, using)
            made.append(name)
        month = next_month(month)
    return made


def _columns(cursor, table: str) -> list:
    raw = _execute(cursor, "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
                           "AND NOT attisdropped ORDER BY attnum", [table])
    return [name for (name,) in raw.fetchall()]


def _write_copy(cursor, name: str, columns: list, path: Path) -> tuple[int, str]:
    """COPY the table ``name`` (ordered by id) into a gzip file; (rows, SHA-256 of the file)."""
    digest, rows = hashlib.sha256(), 0

    class Hashing:
        def __init__(self, file):
            self.file = file

        def write(self, data):
            digest.update(data)
            return self.file.write(data)

        def flush(self):
            self.file.flush()

    statement = sql.SQL("COPY (SELECT {} FROM {} ORDER BY id) TO STDOUT").format(
        sql.SQL(", ").join(map(sql.Identifier, columns)), sql.Identifier(ARCHIVE_SCHEMA, name))
    with (open(path, "xb") as file,
          gzip.GzipFile(fileobj=Hashing(file), mode="wb", compresslevel=COMPRESS_LEVEL, mtime=0) as zipped,
          cursor.cursor.copy(statement) as copy):
        for block in copy:
            zipped.write(block)
            rows += bytes(block).count(b"\n")
    return rows, digest.hexdigest()


def archived_partitions(cursor, table: str) -> dict:
    """{month: name} of the partitions of ``table`` detached into ARCHIVE_SCHEMA."""
    raw = _execute(cursor, "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                           "WHERE n.nspname = %s AND c.relkind = 'r'", [ARCHIVE_SCHEMA])
    found = {}
    for (name,) in raw.fetchall():
        match = _PARTITION_NAME.match(name)
        if match and match["table"] == table:
            found[date(int(match["month"][:4]), int(match["month"][4:]), 1)] = name
    return found


def _detached_in_public(cursor, table: str) -> list:
    """Monthly partitions of ``table`` detached but not yet moved to ARCHIVE_SCHEMA (a run stopped
    between the two): tables of their name in public that are no partition."""
    raw = _execute(cursor, "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                           "WHERE n.nspname = 'public' AND c.relkind = 'r' AND NOT c.relispartition", [])
    return sorted(name for (name,) in raw.fetchall()
                  if (match := _PARTITION_NAME.match(name)) and match["table"] == table)


def _drop_foreign_keys(name: str, using: str) -> None:
    """A detached partition keeps its foreign keys as its own: an archived ledger month's would
    forbid detaching the bets' month it references. A restore gives them back (_validate_foreign_keys).
    Dropping a key drops its triggers on the table it references (and the clones it keeps per
    partition of a partitioned one): ACCESS EXCLUSIVE there, taken first (ddl_locks)."""
    archived = f"{ARCHIVE_SCHEMA}.{name}"
    with connections[using].cursor() as cursor:
        keys = own_foreign_keys(cursor, archived)
        referenced = ddl_locks.referenced_tables(cursor, archived)

    def drop(cursor):
        for constraint, _definition in keys:
            _execute(cursor, sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                sql.Identifier(ARCHIVE_SCHEMA, name), sql.Identifier(constraint)))

    if keys:
        ddl_locks.run_locked(drop, locks=dict.fromkeys(referenced, ddl_locks.ACCESS_EXCLUSIVE), using=using)


def _detach_pending(raw, name: str) -> bool:
    """Whether partition ``name`` is left half detached (a DETACH … CONCURRENTLY that stopped)."""
    return raw.execute("SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = %s::regclass",
                       [name]).fetchone()[0]


def _detach_concurrently(table: str, name: str, using: str) -> None:
    """DETACH … CONCURRENTLY (writers go on), or its FINALIZE where a try stopped between its two
    transactions; its lock waits are short and tried again (ddl_locks)."""
    def statement(raw):
        mode = "FINALIZE" if _detach_pending(raw, name) else "CONCURRENTLY"
        return sql.SQL("ALTER TABLE {} DETACH PARTITION {} {}").format(
            _identifier(table), _identifier(name), sql.SQL(mode))

    ddl_locks.run_retrying(statement, using=using)


def _referencing_keys(cursor, table: str) -> list:
    """[(schema, table, constraint, definition, column, indexed)] of the one-column foreign keys other
    tables hold on ``table`` (their own, not the clones PostgreSQL keeps per partition); ``indexed``:
    an index of theirs starts with the column. A key on ``table``, partitioned by RANGE (id), can only
    be on its id: a unique key there must hold the partition key."""
    return _execute(cursor, "SELECT n.nspname, c.relname, k.conname, pg_get_constraintdef(k.oid), a.attname, "
                            "EXISTS (SELECT FROM pg_index i "
                            "        WHERE i.indrelid = k.conrelid AND i.indkey[0] = k.conkey[1]) "
                            "FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
                            "JOIN pg_namespace n ON n.oid = c.relnamespace "
                            "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1] "
                            "WHERE k.confrelid = %s::regclass AND k.contype = 'f' AND k.conparentid = 0 "
                            "AND k.conrelid <> k.confrelid AND cardinality(k.conkey) = 1", [table]).fetchall()


def _detach(table: str, name: str, month: date, using: str) -> None:
    """Detach a month without PostgreSQL's proof that no row of a table referencing ``table`` points
    into it: that proof joins the month with every such row online, holding their tables in SHARE
    mode until it ends (a bet waited 2.4 s to write its ledger entry at 10 million bets). Instead,
    in one transaction under the locks taken first (ddl_locks), catalog work and index probes only:
    each key's column probed, through its index, for a row in the month's id range (refused if one
    is found, as PostgreSQL would: the archive's holds keep such a month online), the keys dropped,
    the month detached, and the keys made again NOT VALID, so that every new row is checked at once;
    the caller validates them online afterwards (validate_keys_left). NOT VALID keys on a partitioned
    table need PostgreSQL 18; before it, for a table no key references, and where a key's column has
    no index to probe, DETACH ... CONCURRENTLY, with the proof."""
    connection = connections[using]
    with connection.cursor() as cursor:
        keys = _referencing_keys(cursor, table)
        referenced = ddl_locks.referenced_tables(cursor, table)
        pending = _detach_pending(cursor.cursor, name)
    if not keys or pending or connection.pg_version < 180000 or not all(indexed for *_key, indexed in keys):
        _detach_concurrently(table, name, using)
        return
    low, high = month_start_id(month), month_start_id(next_month(month))

    def detach(cursor):
        _execute(cursor, "SET LOCAL enable_seqscan = off")  # the probes read the index, not the table
        for schema, referencing, _constraint, _definition, column, _indexed in keys:
            if _execute(cursor, sql.SQL("SELECT EXISTS (SELECT FROM {} WHERE {} >= %s AND {} < %s)").format(
                    sql.Identifier(schema, referencing), sql.Identifier(column), sql.Identifier(column)),
                    [low, high]).fetchone()[0]:
                raise ArchiveError(f"{schema}.{referencing} still references rows of {name}")
        for schema, referencing, constraint, *_rest in keys:
            _execute(cursor, sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                sql.Identifier(schema, referencing), sql.Identifier(constraint)))
        _execute(cursor, sql.SQL("ALTER TABLE {} DETACH PARTITION {}").format(_identifier(table), _identifier(name)))
        for schema, referencing, constraint, definition, *_rest in keys:
            _execute(cursor, sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} {} NOT VALID").format(
                sql.Identifier(schema, referencing), sql.Identifier(constraint), sql.SQL(definition)))

    # ACCESS EXCLUSIVE holds readers too, for a moment; the detached month's own keys get triggers of
    # their own on the tables they reference.
    locks = {**dict.fromkeys(referenced, ddl_locks.SHARE_ROW_EXCLUSIVE), ("public", table): ddl_locks.ACCESS_EXCLUSIVE,
             **{(schema, referencing): ddl_locks.ACCESS_EXCLUSIVE for schema, referencing, *_rest in keys}}
    ddl_locks.run_locked(detach, locks=locks, using=using)


def validate_keys_left(table: str, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Validate, online (SHARE UPDATE EXCLUSIVE: writers go on), the foreign keys of the tables online
    on or referencing ``table`` left NOT VALID: by _detach, or by a run that stopped before validating
    them. A staged table in ARCHIVE_SCHEMA is left to its restore (_validate_foreign_keys)."""
    with connections[using].cursor() as cursor:
        left = _execute(cursor, "SELECT n.nspname, c.relname, k.conname FROM pg_constraint k "
                                "JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                                "WHERE k.contype = 'f' AND k.conparentid = 0 AND NOT k.convalidated "
                                "AND n.nspname <> %s AND %s::regclass IN (k.conrelid, k.confrelid)",
                        [ARCHIVE_SCHEMA, table]).fetchall()
        for schema, relation, constraint in left:
            _execute(cursor, sql.SQL("ALTER TABLE {} VALIDATE CONSTRAINT {}").format(
                sql.Identifier(schema, relation), sql.Identifier(constraint)))


def archive(table: str, *, before: date, to: str | Path, recorded=frozenset(),
            using: str = DEFAULT_DB_ALIAS) -> list:
    """Detach every monthly partition of ``table`` wholly before ``before`` and write each to ``to``;
    the manifests written, oldest first. A partition detached by a run that stopped before its file
    was written (it waits in ARCHIVE_SCHEMA, or in public if it stopped before the move) is written
    by the next run; so is one whose manifest is there but not in ``recorded`` (the partitions the
    caller's record names: a stopped run's, or a month archived again after a restore), afresh. Runs
    outside any transaction (DETACH … CONCURRENTLY)."""
    connection = connections[using]
    if connection.in_atomic_block:
        raise RuntimeError("archive detaches CONCURRENTLY: call it outside a transaction")
    directory = Path(to)
    directory.mkdir(parents=True, exist_ok=True)
    manifests = []
    with connection.cursor() as cursor:
        _execute(cursor, sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(_identifier(ARCHIVE_SCHEMA)))
        columns = _columns(cursor, table)
        for month, name in sorted(month_partitions(table, using=using).items()):
            if next_month(month) <= before:
                _detach(table, name, month, using)
        # The keys a detach made again NOT VALID, once for every month, and any a stopped run left.
        validate_keys_left(table, using=using)
        for name in _detached_in_public(cursor, table):
            _execute(cursor, sql.SQL("ALTER TABLE {} SET SCHEMA {}").format(
                _identifier(name), _identifier(ARCHIVE_SCHEMA)))
        for month, name in sorted(archived_partitions(cursor, table).items()):
            if next_month(month) > before:
                continue
            _drop_foreign_keys(name, using)
            if name in recorded and (directory / f"{name}.json").exists():
                continue
            file = directory / f"{name}.copy.gz"
            file.unlink(missing_ok=True)  # the part a stopped run wrote, or a file the record does not name
            rows, digest = _write_copy(cursor, name, columns, file)
            manifest = Manifest(table=table, partition=name, month=f"{month:%Y-%m}", id_from=month_start_id(month),
                                id_to=month_start_id(next_month(month)), columns=columns, rows=rows, sha256=digest,
                                file=file.name)
            written = directory / f"{name}.json.part"  # renamed whole: a manifest is never half there
            written.write_text(json.dumps(manifest.as_json(), indent=1) + "\n")
            written.replace(directory / f"{name}.json")
            manifests.append(manifest)
    return manifests


class ArchiveError(ValueError):
    """A file that does not match its manifest, a partition already attached, or a month that rows
    of a table kept online still reference."""


def _manifest_path(path: str | Path) -> Path:
    path = Path(path)
    return path.parent / f"{path.name.removesuffix('.copy.gz').removesuffix('.json')}.json"


def read_manifest_table(path: str | Path) -> str:
    """The table of an archive file's manifest, unchecked (to order restores)."""
    return json.loads(_manifest_path(path).read_text())["table"]


def read_manifest(path: str | Path) -> tuple[Manifest, Path]:
    """The manifest of an archive file (``X.copy.gz`` or its ``X.json``) and the file, checked:
    its SHA-256 must be the manifest's."""
    path = _manifest_path(path)
    manifest = Manifest(**json.loads(path.read_text()))
    file = path.parent / manifest.file
    digest = hashlib.sha256()
    with open(file, "rb") as data:
        while block := data.read(COPY_CHUNK):
            digest.update(block)
    if digest.hexdigest() != manifest.sha256:
        raise ArchiveError(f"{file.name}: its SHA-256 is not the manifest's (altered or truncated)")
    return manifest, file


def restore(path: str | Path, *, using: str = DEFAULT_DB_ALIAS) -> Manifest:
    """Attach the archived partition of ``path`` again: the table still in ARCHIVE_SCHEMA if it is
    there, else one loaded there from the checked file; its rows counted against the manifest. In
    three steps, so that writers go on: loaded (or found), indexed, range-checked and analysed, then
    given the parent's foreign keys NOT VALID and validated (ROW SHARE on the tables they
    reference), then attached (catalog work only, under the locks ddl_locks takes first),
    which takes those keys as the parent's instead of checking every row while it holds the tables
    they reference (a ledger month's check held the accounts and the bets: a bet waited 5 s)."""
    manifest, file = read_manifest(path)
    if manifest.partition in month_partitions(manifest.table, using=using).values():
        raise ArchiveError(f"{manifest.partition} is attached already")
    validate_keys_left(manifest.table, using=using)  # the keys the staged table takes as the parent's
    staged = sql.Identifier(ARCHIVE_SCHEMA, manifest.partition)
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        kept = _execute(cursor, "SELECT to_regclass(%s) IS NOT NULL",
                        [f"{ARCHIVE_SCHEMA}.{manifest.partition}"]).fetchone()[0]
        if not kept:
            _execute(cursor, sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING DEFAULTS INCLUDING CONSTRAINTS "
                                     "INCLUDING GENERATED INCLUDING STORAGE)").format(
                staged, _identifier(manifest.table)))
            statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
                staged, sql.SQL(", ").join(map(sql.Identifier, manifest.columns)))
            with gzip.open(file, "rb") as data, cursor.cursor.copy(statement) as copy:
                while block := data.read(COPY_CHUNK):
                    copy.write(block)
        _build_parent_indexes(cursor, manifest.table, f"{ARCHIVE_SCHEMA}.{manifest.partition}")
        rows = _execute(cursor, sql.SQL("SELECT count(*) FROM {}").format(staged)).fetchone()[0]
        if rows != manifest.rows:
            raise ArchiveError(f"{manifest.partition}: {rows} rows, the manifest says {manifest.rows}")
        _range_check(cursor, staged, manifest.partition, manifest.id_from, manifest.id_to)
        # Attached with its statistics: without them the planner read restored months whole for
        # queries their indexes answer (a bet took 60 ms instead of 7 until autovacuum came by).
        _execute(cursor, sql.SQL("ANALYZE {}").format(staged))
    _validate_foreign_keys(manifest.table, manifest.partition, using)

    def attach(cursor):
        _execute(cursor, sql.SQL("ALTER TABLE {} SET SCHEMA public").format(staged))
        _attach(cursor, manifest.table, manifest.partition, manifest.id_from, manifest.id_to)

    # ATTACH drops the staged table's own triggers on the tables its keys reference (ACCESS
    # EXCLUSIVE there, after SHARE ROW EXCLUSIVE: a deadlock with a bet, unless taken first) and
    # gives the tables referencing this one their triggers on it.
    with connections[using].cursor() as cursor:
        locks = {**dict.fromkeys(ddl_locks.referencing_tables(cursor, manifest.table), ddl_locks.SHARE_ROW_EXCLUSIVE),
                 **dict.fromkeys(ddl_locks.referenced_tables(cursor, manifest.table), ddl_locks.ACCESS_EXCLUSIVE)}
    ddl_locks.run_locked(attach, locks=locks, using=using)
    return manifest


def _validate_foreign_keys(table: str, name: str, using: str) -> None:
    """The parent's own foreign keys on the staged table ``name``, as the parent defines them (so
    that ATTACH takes them as its partition's), added NOT VALID (SHARE ROW EXCLUSIVE a moment on the
    tables they reference, taken first: ddl_locks) and validated online. A key there already, from a
    run that stopped, is kept."""
    staged = sql.Identifier(ARCHIVE_SCHEMA, name)
    with connections[using].cursor() as cursor:
        keys = own_foreign_keys(cursor, table)
        referenced = ddl_locks.referenced_tables(cursor, table)
        present = {constraint for (constraint,) in _execute(
            cursor, "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
            [f"{ARCHIVE_SCHEMA}.{name}"]).fetchall()}

    def add(cursor):
        for constraint, definition in keys:
            if constraint not in present:
                _execute(cursor, sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} {} NOT VALID").format(
                    staged, sql.Identifier(constraint), sql.SQL(definition)))

    ddl_locks.run_locked(add, locks=dict.fromkeys(referenced, ddl_locks.SHARE_ROW_EXCLUSIVE), using=using)
    with connections[using].cursor() as cursor:
        for constraint, _definition in keys:
            _execute(cursor, sql.SQL("ALTER TABLE {} VALIDATE CONSTRAINT {}").format(
                staged, sql.Identifier(constraint)))
