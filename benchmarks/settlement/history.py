"""--prefill: settlement measured beside history. The bets, ledger entries and effects then also
hold ``bets`` settled bets of the past (benchmarks.intake.prefill: ten a round, on rounds of a game
of their own over the last year, with their keys, ledger entries and effects), on accounts of their
own (``history-…``), so that the worker's reads and writes go through indexes of that size.

Writing them takes minutes a million, and every build wipes the tables, so they are written once:
the data set is built, the history written beside it, and the database copied to a template
(``<name>_template``). Each measurement then starts from a fresh copy of that template (CREATE
DATABASE … TEMPLATE): the same rows, statistics and visibility map every time. The template is
dropped at the end of the run."""

from contextlib import contextmanager
from decimal import Decimal

from django.db import connection, connections
from psycopg import sql

from benchmarks.database import drop_database, server_connection
from benchmarks.intake.prefill import prefill

from .data import T_ACCOUNT, T_BET, T_LEDGER, bench_client, checkpoint

ACCOUNTS = 10_000
ACCOUNT_PREFIX = "history-"  # the data set's are "bench-…" (data.ACCOUNT_PREFIX)
# Enough for every push to be written at a balance above zero (each entry is one stake: 1.00).
BALANCE = Decimal("1000.00")


def write(bets: int, say) -> None:
    """The history's accounts, each funded by a deposit, then its ``bets`` past bets."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""INSERT INTO {T_ACCOUNT} (external_id, currency, balance, created_at)
                SELECT %s || lpad(i::text, 7, '0'), 'USD', %s, now()
                FROM generate_series(1, %s) AS i ORDER BY i RETURNING id""",
            [ACCOUNT_PREFIX, BALANCE, ACCOUNTS],
        )
        ids = sorted(row[0] for row in cursor.fetchall())
        cursor.execute(
            f"""INSERT INTO {T_LEDGER} (account_id, bet_id, kind, amount, balance_after, reason, created_at)
                SELECT id, NULL, 'ADJUSTMENT', %s, %s, 'bench history deposit', now()
                FROM unnest(%s::bigint[]) AS id ORDER BY id""",
            [BALANCE, BALANCE, ids],
        )
    prefill(bets, client_id=bench_client(), accounts=(ids[0], ids[-1]), say=say)


def size() -> int:
    """The settled bets of the history in the database now."""
    with connection.cursor() as cursor:
        cursor.execute(f"""SELECT count(*) FROM {T_BET}
                           WHERE account_id IN (SELECT id FROM {T_ACCOUNT} WHERE starts_with(external_id, %s))""",
                       [ACCOUNT_PREFIX])
        return cursor.fetchone()[0]


@contextmanager
def kept(say):
    """Keep the database as it is now as the template of every measurement; drop it on the way out."""
    template = _template()
    _copy(connection.settings_dict["NAME"], template)
    say(f"  (history kept in the template {template}: every measurement starts from a copy of it)")
    try:
        yield
    finally:
        connections.close_all()
        with _maintenance() as maintenance:
            drop_database(maintenance, template)


def restore() -> None:
    """The database again as the template holds it, its pages written out (as each build leaves it)."""
    _copy(_template(), connection.settings_dict["NAME"])
    with connection.cursor() as cursor:
        checkpoint(cursor)


def _template() -> str:
    return f"{connection.settings_dict['NAME']}_template"


def _maintenance():
    return server_connection(connection.settings_dict, autocommit=True)


def _copy(source: str, target: str) -> None:
    """``target`` dropped (closing any session on it) and created anew as a copy of ``source``: file
    by file where the server can (PostgreSQL 15+), much faster than through the WAL for a big one."""
    connections.close_all()
    with _maintenance() as maintenance:
        strategy = " STRATEGY = FILE_COPY" if maintenance.info.server_version >= 150000 else ""
        drop_database(maintenance, target)
        maintenance.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}" + strategy).format(
            sql.Identifier(target), sql.Identifier(source)))
