"""--prefill: settlement measured beside history. The bets, ledger entries and effects then also
hold ``bets`` settled bets of the past (benchmarks.intake.prefill: ten a round, on rounds of a game
of their own over the last year, with their keys, ledger entries and effects), on accounts of their
own (``history-…``), so that the worker's reads and writes go through indexes of that size.

Writing them takes minutes a million, and a build wipes the tables, so they are written once, beside
the data set. Before each measurement the previous one's settlement of the data set is undone in
place (``fresh``): no copy of the database, which at 50 million bets (about 58 GB) twice over would
not fit where it runs. The data set's rows must then equal the build's, column by column, or the
run stops. The history's bets, ledger, effects and accounts are left as they are; the audit log
is emptied, the history game's creation event with it (nothing measured reads it)."""

from decimal import Decimal

from django.core.management.base import CommandError
from django.db import connection, transaction

from audit.append_only import trigger_name
from benchmarks.intake.prefill import prefill
from games.choices import BetStatus, RoundStatus
from wallet.choices import LedgerKind

from .data import (
    GAME_SLUG,
    OF_THE_DATA_SET,
    T_ACCOUNT,
    T_BET,
    T_EFFECT,
    T_GAME,
    T_LEDGER,
    T_ROUND,
    bench_client,
    bench_tables,
    checkpoint,
    rows_digest,
)

ACCOUNTS = 10_000
ACCOUNT_PREFIX = "history-"  # the data set's are "bench-…" (data.ACCOUNT_PREFIX)
# Enough for every push to be written at a balance above zero (each entry is one stake: 1.00).
BALANCE = Decimal("1000.00")
# The append-only tables (audit.append_only) whose rows of the data set the undo deletes.
APPEND_ONLY = [T_EFFECT, T_LEDGER]


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


def fresh(built: str) -> None:
    """The data set as built (``built``, its rows_digest then) beside the history, before a measurement;
    then VACUUM ANALYZE and a checkpoint (data.checkpoint)."""
    _undo_settlement()
    if (now := rows_digest()) != built:
        raise CommandError(f"The data set's rows differ from the build's after its settlement was undone "
                           f"(digest {now}, built {built}): a table the settlement writes is not undone.")
    with connection.cursor() as cursor:
        checkpoint(cursor)


def _undo_settlement() -> None:
    """The settlement and audit apps' tables emptied (the history writes no batch and no aggregate;
    its game's creation event goes); the data set's payouts, effects, bets, rounds and balances set
    back as built; the history's rows of the other tables left as they are."""
    emptied = bench_tables(labels=("settlement", "audit"))
    with transaction.atomic(), connection.cursor() as cursor:
        # No CASCADE: a table that refers to one of these and is not listed fails the statement
        # rather than being emptied with them.
        cursor.execute(f"TRUNCATE {', '.join(emptied)}")
        for table in APPEND_ONLY:  # their triggers off until enabled below, in this transaction
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger_name(table)}")
        cursor.execute(f"DELETE FROM {T_EFFECT} WHERE bet_id IN (SELECT id FROM {T_BET} WHERE {OF_THE_DATA_SET})")
        cursor.execute(f"DELETE FROM {T_LEDGER} WHERE {OF_THE_DATA_SET} AND kind NOT IN (%s, %s)",
                       [LedgerKind.ADJUSTMENT, LedgerKind.STAKE])
        cursor.execute(f"""UPDATE {T_BET} SET status = %s, payout = NULL, settled_at = NULL, hold_reason = '',
                               held_at = NULL
                           WHERE {OF_THE_DATA_SET} AND status <> %s""", [BetStatus.PENDING, BetStatus.PENDING])
        cursor.execute(f"""UPDATE {T_ROUND} SET status = %s, settled_at = NULL, settlement_failures = 0
                           WHERE game_id = (SELECT id FROM {T_GAME} WHERE slug = %s) AND status <> %s""",
                       [RoundStatus.DEALT, GAME_SLUG, RoundStatus.DEALT])
        cursor.execute(f"""UPDATE {T_ACCOUNT} AS a SET balance = l.total
                           FROM (SELECT account_id, sum(amount) AS total FROM {T_LEDGER} WHERE {OF_THE_DATA_SET}
                                 GROUP BY account_id) AS l
                           WHERE a.id = l.account_id AND a.balance <> l.total""")
        for table in APPEND_ONLY:
            cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER {trigger_name(table)}")
