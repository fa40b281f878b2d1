"""The PostgreSQL server behind Django's connection, reached directly: the benchmarks create, fill
and drop databases of their own, which Django's connection (bound to one database) cannot do."""

from contextlib import contextmanager

import psycopg
from django.core.management import CommandError, call_command
from django.db import connection
from psycopg import sql

from dbutils.partitions import own_foreign_keys
from dbutils.postgresql import urls
from games.models import Bet
from wallet.models import LedgerEntry


def server_connection(params: dict, dbname: str = "postgres", **options) -> psycopg.Connection:
    """A psycopg connection to ``dbname`` on the server of the Django settings ``params``; the
    default, the maintenance database, is where CREATE and DROP DATABASE run."""
    return psycopg.connect(**urls.conninfo(params, name=dbname), connect_timeout=10, **options)


def database_exists(maintenance: psycopg.Connection, name: str) -> bool:
    return maintenance.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


def create_database(maintenance: psycopg.Connection, name: str) -> None:
    maintenance.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(maintenance: psycopg.Connection, name: str) -> None:
    maintenance.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def prepare_database(say) -> None:
    """Create the configured database when it does not exist, then bring its schema up to date."""
    name = connection.settings_dict["NAME"]
    try:
        maintenance = server_connection(connection.settings_dict, autocommit=True)
    except psycopg.Error as error:
        say(f"(cannot reach the maintenance database to check that {name} exists: {error})")
    else:
        with maintenance:
            if not database_exists(maintenance, name):
                say(f"creating database {name}")
                create_database(maintenance, name)
    call_command("migrate", interactive=False, verbosity=0)
    refuse_missing_foreign_keys()


# Foreign keys the database holds that no model field declares (wallet.models.LedgerEntry's bet_id).
DATABASE_ONLY_KEYS = {LedgerEntry: {"bet_id"}}


def refuse_missing_foreign_keys() -> None:
    """The foreign keys a bulk load drops (foreign_keys_checked_after) must be back: a load stopped
    before it added them leaves them missing, which no migration restores, and a benchmark would
    then measure writes without their checks."""
    with connection.cursor() as cursor:
        for model in (Bet, LedgerEntry):
            cursor.execute(
                """SELECT a.attname FROM pg_constraint AS c
                   JOIN pg_attribute AS a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
                   WHERE c.conrelid = %s::regclass AND c.contype = 'f' AND c.conparentid = 0""",
                [model._meta.db_table])
            present = {column for (column,) in cursor.fetchall()}
            declared = {field.column for field in model._meta.concrete_fields
                        if field.is_relation and field.db_constraint} | DATABASE_ONLY_KEYS.get(model, set())
            if missing := sorted(declared - present):
                raise CommandError(
                    f"{model._meta.db_table} lacks the foreign keys of {', '.join(missing)}: a bulk load was "
                    f"stopped before it added them back. Drop the database {connection.settings_dict['NAME']} "
                    "(it is made again and migrated on the next run).")


@contextmanager
def foreign_keys_checked_after(table: str):
    """A bulk load's foreign keys checked once, after it, as PostgreSQL's "Populating a Database"
    advises: dropped, then added again, which checks each by one join instead of a lookup per row
    (10 million ledger entries' deferred checks through the partitioned bets took most of an hour)."""
    with connection.cursor() as cursor:
        keys = own_foreign_keys(cursor, table)
        for name, _definition in keys:
            cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for name, definition in keys:
                cursor.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
