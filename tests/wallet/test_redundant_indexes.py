"""Indexes no lookup needs are gone, on PostgreSQL both ways of their migrations: the bets' and ledger
entries' foreign keys keep their constraints but not an index of their own (composite indexes lead
with each column), and the audit events keep no pattern-operator index but the actor's."""

from io import StringIO

import pytest
from django.core.management import call_command

from audit.models import AuditEvent
from games.models import Bet
from tests import app_role
from wallet.models import LedgerEntry

GONE = {Bet._meta.db_table: ["account_id", "client_id", "round_id"],
        LedgerEntry._meta.db_table: ["account_id", "bet_id"]}
AUDIT = AuditEvent._meta.db_table


def _single_column_indexes(connection, table) -> list:
    """(column, operator class) of each single-column index."""
    with connection.cursor() as cursor:
        cursor.execute("""SELECT a.attname, o.opcname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
                          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
                          JOIN pg_opclass o ON o.oid = i.indclass[0]
                          WHERE c.relname = %s AND i.indnatts = 1""", [table])
        return cursor.fetchall()


def single_column_indexes(connection, table) -> set:
    return {column for column, _opclass in _single_column_indexes(connection, table)}


def pattern_indexed_columns(connection, table) -> set:
    """Columns with a varchar_pattern_ops index (one that serves LIKE 'prefix%' only)."""
    return {column for column, opclass in _single_column_indexes(connection, table)
            if opclass == "varchar_pattern_ops"}


def foreign_key_columns(connection, table) -> set:
    with connection.cursor() as cursor:
        cursor.execute("""SELECT a.attname FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
                          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.conkey[1]
                          WHERE c.relname = %s AND k.contype = 'f'""", [table])
        return {row[0] for row in cursor.fetchall()}


def assert_gone(connection):
    for table, columns in GONE.items():
        assert not set(columns) & single_column_indexes(connection, table), table
        assert set(columns) <= foreign_key_columns(connection, table), table
    assert pattern_indexed_columns(connection, AUDIT) == {"actor"}  # the admin's search by its beginning
    assert "action" in single_column_indexes(connection, AUDIT)  # exact lookups keep theirs
    # The chain's hashes are only in the legacy partition of the events partitioned by month (audit 0009).
    assert "hash" in single_column_indexes(connection, f"{AUDIT}_legacy")


@pytest.mark.services
@pytest.mark.owner  # migrating is the owner's
def test_the_indexes_go_and_come_back_the_constraints_stay(postgres):
    assert_gone(postgres)
    try:
        call_command("migrate", "games", "0012", verbosity=0)
        call_command("migrate", "wallet", "0002", verbosity=0)
        call_command("migrate", "audit", "0004", verbosity=0)
        for table, columns in GONE.items():
            assert set(columns) <= single_column_indexes(postgres, table), table
            assert set(columns) <= foreign_key_columns(postgres, table), table
        assert pattern_indexed_columns(postgres, AUDIT) == {"actor", "action", "hash"}
    finally:
        call_command("migrate", verbosity=0)
        # Tables made again by the migrations have no grants yet: db_roles gives them, as after every migrate.
        call_command("db_roles", app_role.APP_ROLE, f"--password={app_role.APP_PASSWORD}", stdout=StringIO())
    assert_gone(postgres)
