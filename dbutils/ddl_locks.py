"""Schema changes on tables in use: their locks taken first, each waited for briefly, tried again.

Two ways a schema change hurts the writers of a busy table (docs/architecture/partitioning.md):

- a statement waiting for a lock queues every later request for that table behind its own, for as
  long as it waits (behind a long report, a backup): an archive's foreign-key drop waited so;
- a transaction that takes a weak lock and later a stronger one on the same table deadlocks with a
  writer that read the table in between: ATTACH of a partition whose foreign keys were validated
  beforehand takes SHARE ROW EXCLUSIVE on the tables they reference, then ACCESS EXCLUSIVE to drop
  the partition's own triggers there, and a bet that had read the accounts and then wrote them met
  a deadlock (a restore failed in CI).

So ``run_locked`` takes the strongest lock each table will need first, in one statement per mode,
strongest first, each waiting at most WAIT, shorter than PostgreSQL's deadlock_timeout (1 s by
default: a writer the change blocks is then never the one chosen to fail). When they are not free
it rolls back, pauses and starts again; a writer waits at most WAIT for it. ``run_retrying`` does
the same for a statement that cannot run in a transaction (DETACH … CONCURRENTLY).
"""

import random
import time

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from psycopg import sql

WAIT = "200ms"
ATTEMPTS = 100  # about half a minute of trying, between the pauses
PAUSE_SECONDS = (0.05, 0.4)  # random within, so two waiting changes do not meet again

ACCESS_EXCLUSIVE = "ACCESS EXCLUSIVE"
SHARE_ROW_EXCLUSIVE = "SHARE ROW EXCLUSIVE"
_MODES = (ACCESS_EXCLUSIVE, SHARE_ROW_EXCLUSIVE)  # strongest first


class LocksBusy(RuntimeError):
    """The locks a schema change needs were not free in ATTEMPTS tries; nothing was changed."""


def run_locked(work, *, locks: dict, using: str = DEFAULT_DB_ALIAS):
    """``work(cursor)`` in a transaction that first takes ``locks`` ({table: mode}; a partitioned
    table's partitions with it), tried again while they are busy; what ``work`` returns."""
    by_mode = {mode: sorted(table for table, wanted in locks.items() if wanted == mode) for mode in _MODES}
    if unknown := set(locks.values()) - set(_MODES):
        raise ValueError(f"not a lock mode here: {unknown}")
    for _attempt in range(ATTEMPTS):
        try:
            with transaction.atomic(using=using), connections[using].cursor() as cursor:
                raw = cursor.cursor  # psycopg's own: its errors arrive as they are
                raw.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(WAIT)))
                for mode, tables in by_mode.items():
                    if tables:
                        raw.execute(sql.SQL("LOCK TABLE {} IN {} MODE").format(
                            sql.SQL(", ").join(_relation(table) for table in tables), sql.SQL(mode)))
                return work(cursor)
        except psycopg.errors.LockNotAvailable:
            time.sleep(random.uniform(*PAUSE_SECONDS))
    raise LocksBusy(f"the locks on {', '.join(sorted(locks))} were busy for {ATTEMPTS} tries; nothing changed")


def run_retrying(statement, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """The statement ``statement(cursor)`` gives, outside any transaction, each lock it waits for
    waited for at most WAIT, tried again while busy; asked again before each try, so that it can
    finish what a try left half done."""
    with connections[using].cursor() as cursor:
        raw = cursor.cursor
        for _attempt in range(ATTEMPTS):
            raw.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(WAIT)))
            tried = statement(raw)
            try:
                raw.execute(tried)
                return
            except psycopg.errors.LockNotAvailable:
                time.sleep(random.uniform(*PAUSE_SECONDS))
            finally:
                raw.execute("RESET lock_timeout")
        raise LocksBusy(f"the locks of {tried.as_string(raw)} were busy for {ATTEMPTS} tries")


def referenced_tables(cursor, table: str) -> list:
    """The tables ``table``'s own foreign keys reference."""
    raw = cursor.cursor.execute("SELECT DISTINCT confrelid::regclass::text FROM pg_constraint "
                                "WHERE conrelid = %s::regclass AND contype = 'f' AND conparentid = 0", [table])
    return [name for (name,) in raw.fetchall()]


def referencing_tables(cursor, table: str) -> list:
    """The tables whose own foreign keys reference ``table``, itself aside."""
    raw = cursor.cursor.execute("SELECT DISTINCT conrelid::regclass::text FROM pg_constraint "
                                "WHERE confrelid = %s::regclass AND contype = 'f' AND conparentid = 0 "
                                "AND conrelid <> confrelid", [table])
    return [name for (name,) in raw.fetchall()]


def _relation(name: str) -> sql.Composable:
    return sql.Identifier(*name.split(".", 1))
