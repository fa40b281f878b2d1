"""A plain table converted in place to one partitioned by RANGE (id) with month-carrying ids
(dbutils.partitions), every row kept: the old heap becomes the legacy partition.

Measured and explained in docs/architecture/partitioning.md. Three steps:

1. online: a CHECK (id < the first month's first id), added NOT VALID and validated (one scan under
   SHARE UPDATE EXCLUSIVE: writers go on), and every CHECK left NOT VALID validated too;
2. one transaction under ``lock_timeout``, catalog work only: the table and its indexes renamed to
   ``<name>_legacy``, the foreign keys that reference it dropped, the identity replaced by a sequence
   whose default puts the month in the id, the partitioned table made with the same columns, the
   legacy heap attached (the CHECK spares ATTACH its scan), the primary key, indexes, foreign keys
   and row triggers made on the parent (PostgreSQL attaches the legacy heap's equal indexes and
   foreign keys instead of building them), the months from ``first_month`` on attached, and the
   referencing foreign keys made again (NOT VALID from a plain table);
3. online: those referencing foreign keys validated.

A referencing table that is itself partitioned gets its foreign key valid at once (PostgreSQL 15
cannot add one NOT VALID there), which scans it inside step 2: convert the referenced table first.
"""

from datetime import date

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from psycopg import sql

from dbutils.partitions import (
    MONTH_SHIFT,
    month_id_sql,
    month_of_id,
    month_start_id,
    next_month,
    own_foreign_keys,
    partition_name,
)

MONTHS_AHEAD = 2
LOCK_TIMEOUT = "5s"  # step 2, a migration's: a planned stop of the writers (docs/operations/partitions.md)


def _run(cursor, statement, params=None):
    raw = cursor.cursor
    raw.execute(statement, params)
    return raw


def _month_id_default(sequence: str) -> sql.Composable:
    return sql.SQL(month_id_sql("now()", sequence))


def _catalog(cursor, table: str) -> dict:
    def rows(statement):
        return _run(cursor, statement, [table]).fetchall()
    return {
        "primary_key": rows("SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'p'")[0][0],
        "indexes": rows("SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i "
                        "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = %s::regclass "
                        "AND NOT i.indisprimary AND NOT i.indisunique"),
        "unique": rows("SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                       "WHERE i.indrelid = %s::regclass AND i.indisunique AND NOT i.indisprimary"),
        "foreign_keys": own_foreign_keys(cursor, table),
        "referencing": rows("SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid), "
                            "(SELECT relkind = 'p' FROM pg_class WHERE oid = conrelid) FROM pg_constraint "
                            "WHERE confrelid = %s::regclass AND contype = 'f' AND conparentid = 0"),
        "triggers": rows("SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger "
                         "WHERE tgrelid = %s::regclass AND NOT tgisinternal"),
    }


def first_month(table: str, *, using: str = DEFAULT_DB_ALIAS) -> date:
    """The first month of ``table``'s partitions: this month (the database's clock), or the month
    after its largest id when ids carry months already (a conversion rolled back), whose months the
    legacy partition then takes too."""
    with connections[using].cursor() as cursor:
        last = _run(cursor, sql.SQL("SELECT date_trunc('month', now())::date, (SELECT max(id) FROM {})").format(
            sql.Identifier(table))).fetchone()
    month, last_id = last
    if last_id is not None and last_id >= month_start_id(month):
        month = next_month(month_of_id(last_id))
    return month


def convert_in_place(table: str, *, first_month: date, using: str = DEFAULT_DB_ALIAS) -> list:
    """Convert ``table`` (a plain table with a bigint ``id`` primary key) as the module says; the
    unique indexes other than the primary key stay on the legacy partition only (the caller keeps
    such a rule in a table of its own). Returns the referencing foreign keys validated in step 3."""
    connection = connections[using]
    if connection.in_atomic_block:
        raise RuntimeError("convert_in_place commits its steps one by one: call it outside a transaction")
    legacy, first = f"{table}_legacy", month_start_id(first_month)
    name, legacy_name = sql.Identifier(table), sql.Identifier(legacy)
    range_check = sql.Identifier(f"{table}_legacy_range")
    with connection.cursor() as cursor:  # step 1
        _run(cursor, sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(name, range_check))
        _run(cursor, sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} CHECK (id < {}) NOT VALID").format(
            name, range_check, sql.Literal(first)))
        for (check,) in _run(cursor, "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass "
                                     "AND contype = 'c' AND NOT convalidated", [table]).fetchall():
            _run(cursor, sql.SQL("ALTER TABLE {} VALIDATE CONSTRAINT {}").format(name, sql.Identifier(check)))
    with transaction.atomic(using=using), connection.cursor() as cursor:  # step 2
        _run(cursor, sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(LOCK_TIMEOUT)))
        found = _catalog(cursor, table)
        for referencing, constraint, _definition, _partitioned in found["referencing"]:
            _run(cursor, sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                sql.Identifier(referencing), sql.Identifier(constraint)))
        _run(cursor, sql.SQL("ALTER TABLE {} RENAME TO {}").format(name, legacy_name))
        renamed = [found["primary_key"], *(index for index, _ in found["indexes"]), *(u for (u,) in found["unique"])]
        for index in renamed:
            _run(cursor, sql.SQL("ALTER INDEX {} RENAME TO {}").format(
                sql.Identifier(index), sql.Identifier(f"{index}_legacy")))
        for trigger, _definition in found["triggers"]:
            _run(cursor, sql.SQL("DROP TRIGGER {} ON {}").format(sql.Identifier(trigger), legacy_name))
        # The sequence's part of an id (all of it for an id that carries no month, such as every
        # id before the first conversion).
        last = _run(cursor, sql.SQL("SELECT coalesce(max(id), 0) % {} FROM {}").format(
            sql.Literal(1 << MONTH_SHIFT), legacy_name)).fetchone()[0]
        _run(cursor, sql.SQL("ALTER TABLE {} ALTER COLUMN id DROP IDENTITY IF EXISTS").format(legacy_name))
        _run(cursor, sql.SQL("ALTER TABLE {} ALTER COLUMN id DROP DEFAULT").format(legacy_name))
        sequence = f"{table}_id_seq"
        _run(cursor, sql.SQL("CREATE SEQUENCE {} START {}").format(sql.Identifier(sequence), sql.Literal(last + 1)))
        _run(cursor, sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE) "
                             "PARTITION BY RANGE (id)").format(name, legacy_name))
        _run(cursor, sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(name, range_check))
        _run(cursor, sql.SQL("ALTER TABLE {} ALTER COLUMN id SET DEFAULT {}").format(name, _month_id_default(sequence)))
        _run(cursor, sql.SQL("ALTER SEQUENCE {} OWNED BY {}.id").format(sql.Identifier(sequence), name))
        _run(cursor, sql.SQL("ALTER TABLE {} ATTACH PARTITION {} FOR VALUES FROM (MINVALUE) TO ({})").format(
            name, legacy_name, sql.Literal(first)))
        _run(cursor, sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} PRIMARY KEY (id)").format(
            name, sql.Identifier(found["primary_key"])))
        for _index, definition in found["indexes"]:
            _run(cursor, definition)  # on the parent now: the legacy heap's renamed one is attached
        for constraint, definition in found["foreign_keys"]:
            _run(cursor, sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} {}").format(
                name, sql.Identifier(constraint), sql.SQL(definition)))
        for _trigger, definition in found["triggers"]:
            _run(cursor, definition)
        month = first_month.replace(day=1)
        for _ in range(MONTHS_AHEAD + 1):
            _run(cursor, sql.SQL("CREATE TABLE {} PARTITION OF {} FOR VALUES FROM ({}) TO ({})").format(
                sql.Identifier(partition_name(table, month)), name, sql.Literal(month_start_id(month)),
                sql.Literal(month_start_id(next_month(month)))))
            month = next_month(month)
        to_validate = []
        for referencing, constraint, definition, partitioned in found["referencing"]:
            _run(cursor, sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} {}{}").format(
                sql.Identifier(referencing), sql.Identifier(constraint), sql.SQL(definition.removesuffix(" NOT VALID")),
                sql.SQL("" if partitioned else " NOT VALID")))
            if not partitioned:
                to_validate.append((referencing, constraint))
    with connection.cursor() as cursor:  # step 3
        for referencing, constraint in to_validate:
            _run(cursor, sql.SQL("ALTER TABLE {} VALIDATE CONSTRAINT {}").format(
                sql.Identifier(referencing), sql.Identifier(constraint)))
    return to_validate


def convert_back(table: str, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Undo ``convert_in_place`` (a migration rolled back), in one transaction: the legacy heap
    detached and named ``table`` again with its indexes, the rows of the monthly partitions copied
    into it (their ids kept), the partitioned table dropped, the identity back from the largest id,
    the row triggers and the foreign keys that referenced the table made again."""
    connection = connections[using]
    legacy, name = sql.Identifier(f"{table}_legacy"), sql.Identifier(table)
    with transaction.atomic(using=using), connection.cursor() as cursor:
        found = _catalog(cursor, table)
        for referencing, constraint, _definition, _partitioned in found["referencing"]:
            _run(cursor, sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                sql.Identifier(referencing), sql.Identifier(constraint)))
        _run(cursor, sql.SQL("ALTER TABLE {} DETACH PARTITION {}").format(name, legacy))
        _run(cursor, sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(
            legacy, sql.Identifier(f"{table}_legacy_range")))
        months = [month for (month,) in _run(cursor, "SELECT inhrelid::regclass::text FROM pg_inherits "
                                                     "WHERE inhparent = %s::regclass", [table]).fetchall()]
        for month in months:
            _run(cursor, sql.SQL("INSERT INTO {} SELECT * FROM {}").format(legacy, sql.Identifier(month)))
        _run(cursor, "SET CONSTRAINTS ALL IMMEDIATE")  # the copied rows' deferred checks, before ALTER TABLE
        _run(cursor, sql.SQL("DROP TABLE {} CASCADE").format(name))  # its partitions and its sequence
        _run(cursor, sql.SQL("ALTER TABLE {} RENAME TO {}").format(legacy, name))
        for (index,) in _run(cursor, "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                                     "WHERE i.indrelid = %s::regclass AND c.relname LIKE '%%\\_legacy'",
                             [table]).fetchall():
            _run(cursor, sql.SQL("ALTER INDEX {} RENAME TO {}").format(
                sql.Identifier(index), sql.Identifier(index.removesuffix("_legacy"))))
        last = _run(cursor, sql.SQL("SELECT coalesce(max(id), 0) FROM {}").format(name)).fetchone()[0]
        _run(cursor, sql.SQL("ALTER TABLE {} ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (START WITH {})")
             .format(name, sql.Literal(last + 1)))
        for trigger, definition in found["triggers"]:
            _run(cursor, sql.SQL("DROP TRIGGER IF EXISTS {} ON {}").format(sql.Identifier(trigger), name))
            _run(cursor, definition)
        for referencing, constraint, definition, _partitioned in found["referencing"]:
            _run(cursor, sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} {}").format(
                sql.Identifier(referencing), sql.Identifier(constraint), sql.SQL(definition)))
