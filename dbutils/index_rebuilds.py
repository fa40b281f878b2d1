"""Indexes of tables in use built without holding up their writers (docs/architecture/partitioning.md):
one index put in another's place (a migration operation), and a table's indexes built again, packed.

PostgreSQL builds no index CONCURRENTLY on a partitioned table, and a plain CREATE INDEX on one holds
SHARE on every partition (no bet, no ledger entry is written) until all are built. So the new index is
made ON ONLY the partitioned table (invalid, and built on nothing), then each partition's own
CONCURRENTLY and attached to it; with the last one attached it becomes valid. A partition created
meanwhile is given the index as it is created; one detached meanwhile (an archive) can leave the
table's index invalid with none left to attach, so an attached one is attached again, which validates
it. Each ATTACH waits briefly for its locks, tried again while busy (ddl_locks): it locks the
partition's new index, and queued behind a long writer it would hold up the writers after it. A try
that stopped leaves an invalid index on a partition, which the next try drops and builds again. Only
then is the old index dropped, its locks taken briefly and tried again (ddl_locks). A table that is
not partitioned has both done CONCURRENTLY.

An index that a table is written to at several places at once (its accounts' bets, its events' objects)
has its pages split half full as they fill, and a partition no longer written keeps them so: ``rebuild``
builds them again packed (REINDEX … CONCURRENTLY), for a month once it is closed.
"""

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.utils import truncate_name
from django.db.migrations.operations.base import Operation
from psycopg import sql

from . import ddl_locks

_IDENTIFIER_LENGTH = 63  # PostgreSQL's NAMEDATALEN - 1


class ReplaceIndex(Operation):
    """``old_index`` of ``model_name`` replaced by ``new_index`` (another name), in a migration with
    ``atomic = False``; reversible, the old index built again the same way."""

    reversible = True
    reduces_to_sql = False  # it reads the catalog as it goes: sqlmigrate says so instead of running it

    def __init__(self, model_name: str, old_index, new_index):
        self.model_name = model_name
        self.old_index = old_index
        self.new_index = new_index

    def deconstruct(self):
        return self.__class__.__qualname__, [], {
            "model_name": self.model_name, "old_index": self.old_index, "new_index": self.new_index}

    def state_forwards(self, app_label, state):
        state.remove_index(app_label, self.model_name.lower(), self.old_index.name)
        state.add_index(app_label, self.model_name.lower(), self.new_index)

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        model = to_state.apps.get_model(app_label, self.model_name)
        self._replace(schema_editor, model, self.old_index, self.new_index)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        model = to_state.apps.get_model(app_label, self.model_name)
        self._replace(schema_editor, model, self.new_index, self.old_index)

    def describe(self):
        return f"Replace index {self.old_index.name} on {self.model_name} by {self.new_index.name}, writers going on"

    @property
    def migration_name_fragment(self):
        return f"{self.model_name.lower()}_{self.new_index.name.lower()}"

    def _replace(self, schema_editor, model, old_index, new_index) -> None:
        alias = schema_editor.connection.alias
        if not self.allow_migrate_model(alias, model):
            return
        if schema_editor.connection.in_atomic_block:
            raise ValueError("ReplaceIndex builds CONCURRENTLY: its migration needs atomic = False")
        table = model._meta.db_table
        build(table, new_index.name, index_columns(model, new_index), using=alias)
        drop(table, old_index.name, using=alias)


def index_columns(model, index) -> sql.Composable:
    """The columns of a Django ``Index`` of plain fields, as "(a, b DESC)"."""
    if index.condition or index.expressions or index.include or index.opclasses:
        raise ValueError(f"{index.name}: ReplaceIndex builds an index of plain fields only")
    return sql.SQL("({})").format(sql.SQL(", ").join(
        sql.SQL("{}{}").format(sql.Identifier(model._meta.get_field(name.lstrip("-")).column),
                               sql.SQL(" DESC" if name.startswith("-") else ""))
        for name in index.fields))


def build(table: str, name: str, columns: sql.Composable, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """The btree index ``name`` on ``columns`` of ``table``, built CONCURRENTLY partition by partition."""
    with connections[using].cursor() as cursor:
        raw = cursor.cursor
        if not _partitioned(raw, table):
            _drop_if_invalid(raw, name)
            raw.execute(sql.SQL("CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON {} {}").format(
                sql.Identifier(name), sql.Identifier(table), columns))
            return
        ddl_locks.run_retrying(lambda _: sql.SQL("CREATE INDEX IF NOT EXISTS {} ON ONLY {} {}").format(
            sql.Identifier(name), sql.Identifier(table), columns), using=using)  # SHARE on the table, briefly
        while partition := _next_without(raw, table, name):
            own = truncate_name(f"{partition}_{name}", _IDENTIFIER_LENGTH)
            _drop_if_invalid(raw, own)
            raw.execute(sql.SQL("CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON {} {}").format(
                sql.Identifier(own), sql.Identifier(partition), columns))
            _attach(name, own, using)
        if not _valid(raw, name) and (attached := _an_attached(raw, name)):
            _attach(name, attached, using)  # the last one missing was detached meanwhile
        if not _valid(raw, name):
            raise RuntimeError(f"index {name} of {table} is not valid once every partition has its own")


def drop(table: str, name: str, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Index ``name`` of ``table`` dropped (with its partitions' own): CONCURRENTLY where PostgreSQL
    can, else within its table's lock taken briefly, tried again while busy."""
    with connections[using].cursor() as cursor:
        partitioned = _partitioned(cursor.cursor, table)
    statement = sql.SQL("DROP INDEX {}IF EXISTS {}").format(
        sql.SQL("" if partitioned else "CONCURRENTLY "), sql.Identifier(name))
    if not partitioned:
        with connections[using].cursor() as cursor:
            cursor.cursor.execute(statement)
        return
    ddl_locks.run_locked(lambda cursor: cursor.cursor.execute(statement),
                         locks={("public", table): ddl_locks.ACCESS_EXCLUSIVE}, using=using)


def _attach(name: str, own: str, using: str) -> None:
    ddl_locks.run_retrying(lambda _: sql.SQL("ALTER INDEX {} ATTACH PARTITION {}").format(
        sql.Identifier(name), sql.Identifier(own)), using=using)  # again once attached: nothing


def _valid(raw, name: str) -> bool:
    return raw.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass", [name]).fetchone()[0]


def _an_attached(raw, name: str) -> str | None:
    row = raw.execute("SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = %s::regclass LIMIT 1",
                      [name]).fetchone()
    return row[0] if row else None


def _partitioned(raw, table: str) -> bool:
    return raw.execute("SELECT relkind = 'p' FROM pg_class WHERE oid = %s::regclass", [table]).fetchone()[0]


def _next_without(raw, table: str, name: str) -> str | None:
    """A partition of ``table`` with no index attached to the partitioned index ``name`` yet."""
    row = raw.execute(
        "SELECT c.relname FROM pg_inherits p JOIN pg_class c ON c.oid = p.inhrelid "
        "WHERE p.inhparent = %s::regclass AND NOT EXISTS ("
        "  SELECT FROM pg_index i JOIN pg_inherits a ON a.inhrelid = i.indexrelid "
        "  WHERE i.indrelid = c.oid AND a.inhparent = %s::regclass) ORDER BY c.relname LIMIT 1",
        [table, name]).fetchone()
    return row[0] if row else None


def _drop_if_invalid(raw, name: str) -> None:
    """An index left invalid by a CONCURRENTLY build that stopped is dropped, to be built again."""
    if raw.execute("SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%s) AND NOT indisvalid", [name]).fetchone():
        raw.execute(sql.SQL("DROP INDEX CONCURRENTLY {}").format(sql.Identifier(name)))


def rebuild(table: str, *, using: str = DEFAULT_DB_ALIAS) -> tuple[int, int]:
    """Every index of ``table`` (a partition, not a partitioned table) built again, packed, writers
    going on; the bytes of its indexes before and after. What a try that stopped left (REINDEX's
    invalid ``_ccnew`` and ``_ccold`` indexes, no other) is dropped first."""
    with connections[using].cursor() as cursor:
        raw = cursor.cursor
        for schema, name in raw.execute(
                "SELECT n.nspname, c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE i.indrelid = %s::regclass "
                "AND NOT i.indisvalid AND c.relname ~ '_cc(new|old)[0-9]*$'", [table]).fetchall():
            raw.execute(sql.SQL("DROP INDEX CONCURRENTLY {}").format(sql.Identifier(schema, name)))
        before = _index_bytes(raw, table)
        raw.execute(sql.SQL("REINDEX TABLE CONCURRENTLY {}").format(sql.Identifier(table)))
        return before, _index_bytes(raw, table)


def _index_bytes(raw, table: str) -> int:
    return raw.execute("SELECT pg_indexes_size(%s::regclass)", [table]).fetchone()[0]
