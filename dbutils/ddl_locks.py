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
strongest first, all of them within WAIT (their statements' timeout: below PostgreSQL's
deadlock_timeout, 1 s by default, so that a writer they hold up never waits long enough to run the
deadlock check and be the one chosen to fail). When they are not free it rolls back, pauses and
starts again, for up to GIVE_UP_SECONDS; a writer waits at most about twice WAIT at each try.
``run_retrying`` waits the same way for a statement that cannot run in a transaction (DETACH …
CONCURRENTLY). Call both outside any transaction: a try rolled back inside one gives back only its
own locks. A long autovacuum of one of those tables keeps the locks busy too (PostgreSQL cancels
one only for a waiter that reaches deadlock_timeout): the change gives up and is run again later.
"""

import random
import time

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from psycopg import sql

WAIT = "200ms"
GIVE_UP_SECONDS = 300.0  # a maintenance task may wait this long; each try holds writers up at most 2 × WAIT
PAUSE_SECONDS = (0.05, 0.4)  # random within, so two waiting changes do not meet again
_BUSY = (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled)  # lock_timeout, statement_timeout

ACCESS_EXCLUSIVE = "ACCESS EXCLUSIVE"
SHARE_ROW_EXCLUSIVE = "SHARE ROW EXCLUSIVE"
_MODES = (ACCESS_EXCLUSIVE, SHARE_ROW_EXCLUSIVE)  # strongest first


class LocksBusy(RuntimeError):
    """The locks a schema change needs stayed busy for GIVE_UP_SECONDS; nothing was changed."""


class _Busy(Exception):
    """One try found its locks busy: ``what`` names them."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def _until_free(attempt):
    """``attempt()`` again after a random pause while it raises _Busy, for up to GIVE_UP_SECONDS."""
    give_up = time.monotonic() + GIVE_UP_SECONDS
    while True:
        try:
            return attempt()
        except _Busy as busy:
            if time.monotonic() > give_up:
                raise LocksBusy(f"{busy.what} were busy for {GIVE_UP_SECONDS:.0f} s; nothing changed") from None
        time.sleep(random.uniform(*PAUSE_SECONDS))


def run_locked(work, *, locks: dict, using: str = DEFAULT_DB_ALIAS):
    """``work(cursor)`` in a transaction that first takes ``locks`` ({table: mode}; a partitioned
    table's partitions with it), tried again while they are busy; what ``work`` returns."""
    if unknown := set(locks.values()) - set(_MODES):
        raise ValueError(f"not a lock mode here: {unknown}")
    by_mode = [(mode, sorted(table for table, wanted in locks.items() if wanted == mode)) for mode in _MODES]
    names = ", ".join(".".join(table) for table in sorted(locks))

    def attempt():
        locked = False
        try:
            with transaction.atomic(using=using), connections[using].cursor() as cursor:
                raw = cursor.cursor  # psycopg's own: its errors arrive as they are
                raw.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(WAIT)))
                raw.execute(sql.SQL("SET LOCAL statement_timeout = {}").format(sql.Literal(WAIT)))
                for mode, tables in by_mode:
                    if tables:
                        raw.execute(sql.SQL("LOCK TABLE {} IN {} MODE").format(
                            sql.SQL(", ").join(map(_relation, tables)), sql.SQL(mode)))
                raw.execute("RESET statement_timeout")
                locked = True
                return work(cursor)
        except _BUSY as error:
            if locked and not isinstance(error, psycopg.errors.LockNotAvailable):
                raise  # a statement of the work's own ran past the session's statement_timeout
            raise _Busy(f"the locks on {names} ({error.diag.message_primary})") from error

    return _until_free(attempt)


def run_retrying(statement, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """The statement ``statement(cursor)`` gives, outside any transaction, each lock it waits for
    waited for at most WAIT, tried again while busy; asked again before each try, so that it can
    finish what a try left half done."""
    with connections[using].cursor() as cursor:
        raw = cursor.cursor

        def attempt():
            tried = statement(raw)
            try:
                raw.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(WAIT)))
                raw.execute(tried)
            except psycopg.errors.LockNotAvailable:
                raise _Busy(f"the locks of {tried.as_string(raw)}") from None
            finally:
                raw.execute("RESET lock_timeout")

        _until_free(attempt)


def referenced_tables(cursor, table: str) -> list:
    """The tables ``table``'s own foreign keys reference, as (schema, name)."""
    return _tables(cursor, "SELECT DISTINCT n.nspname, c.relname FROM pg_constraint k "
                           "JOIN pg_class c ON c.oid = k.confrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                           "WHERE k.conrelid = %s::regclass AND k.contype = 'f' AND k.conparentid = 0", table)


def referencing_tables(cursor, table: str) -> list:
    """The tables whose own foreign keys reference ``table``, itself aside, as (schema, name)."""
    return _tables(cursor, "SELECT DISTINCT n.nspname, c.relname FROM pg_constraint k "
                           "JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                           "WHERE k.confrelid = %s::regclass AND k.contype = 'f' AND k.conparentid = 0 "
                           "AND k.conrelid <> k.confrelid", table)


def _tables(cursor, query: str, table: str) -> list:
    return [tuple(row) for row in cursor.cursor.execute(query, [table]).fetchall()]


def _relation(table: tuple) -> sql.Composable:
    return sql.Identifier(*table)
