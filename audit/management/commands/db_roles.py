"""Least privilege: the login role the application runs as, made by the tables' owner.

On the append-only tables (those with an ``<table>_append_only`` trigger: audit events, leaves,
nodes and heads, the ledger) it gets SELECT and INSERT only; elsewhere SELECT, INSERT, UPDATE and
DELETE; never TRUNCATE, TRIGGER, REFERENCES or ownership, so it can neither rewrite history nor
switch off the triggers. Run it after every ``migrate`` (new tables need their grants).
"""

from django.core.management.base import BaseCommand
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from psycopg import sql

READ_ONLY_TABLES = {"django_migrations"}


class Command(BaseCommand):
    help = "Create or update the application's login role with only what the application needs."

    def add_arguments(self, parser):
        parser.add_argument("role", help="the application role, e.g. baccarat_app")
        parser.add_argument("--password", required=True)
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS,
                            help="the database alias to grant on (connected as the tables' owner)")

    def handle(self, *args, role, password, database, **options):
        connection = connections[database]
        with transaction.atomic(using=database), connection.cursor() as cursor:
            cursor.execute("SELECT tgrelid::regclass::text FROM pg_trigger WHERE tgname LIKE '%%\\_append\\_only'")
            append_only = {row[0] for row in cursor.fetchall()}
            cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
            verb = "ALTER" if cursor.fetchone() else "CREATE"
            name = sql.Identifier(role)
            statements = [
                sql.SQL(verb + " ROLE {} LOGIN PASSWORD {} NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
                        "NOBYPASSRLS").format(name, sql.Literal(password)),
                sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                    sql.Identifier(connection.settings_dict["NAME"]), name),
                sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(name),
                sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(name),
                sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {}").format(name),
            ]
            for table in connection.introspection.table_names(cursor):
                if table in READ_ONLY_TABLES:
                    privileges = "SELECT"
                elif table in append_only:
                    privileges = "SELECT, INSERT"
                else:
                    privileges = "SELECT, INSERT, UPDATE, DELETE"
                statements.append(sql.SQL("GRANT " + privileges + " ON {} TO {}").format(sql.Identifier(table), name))
            for statement in statements:
                cursor.execute(statement.as_string(cursor.cursor))
        self.stdout.write(f"{role}: {len(append_only)} append-only tables (SELECT, INSERT), "
                          f"{len(statements) - 5} tables granted")
