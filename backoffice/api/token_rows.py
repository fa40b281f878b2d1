"""The rows token authentication reads, kept by each web process's database connection between
requests until PostgreSQL says that what they were read from has changed.

A connection that keeps rows first LISTENs on CHANNEL. Triggers on every table the rows come from
(tokens, users, groups, permissions, content types: migration backoffice 0001) NOTIFY that channel
in the transaction that changes them, so the notice reaches every listener when that transaction
commits. Before a kept row is used, the connection's notices are read without a round trip (its
socket is polled), and any notice empties what it keeps. A revoked token or a withdrawn permission
thus holds for every request that starts once PostgreSQL has delivered the notice: microseconds
after the commit, a few milliseconds on a loaded machine.

Nothing is kept inside a transaction (PostgreSQL holds notices back until it ends, and a test's
transaction never ends), on a connection closed after each request (CONN_MAX_AGE 0: the LISTEN
would be a round trip more and nothing would be kept), with a psycopg that drops notices arriving
during another query (before 3.2.4), or with API_TOKEN_CACHE_SIZE 0. Behind a pooler in transaction
mode (DATABASE_POOLER), which would send the LISTEN to one server connection and the later queries
to others, the notices are heard on a direct connection of each thread's own (DATABASE_LISTEN_URL),
and without one nothing is kept. A row older than API_TOKEN_CACHE_SECONDS is read again whatever
the notices say. Notices that arrive while a connection serves other requests wait in psycopg's
queue until its next token request or its end (CONN_MAX_AGE).
"""

import re
import select
import threading
import time
import weakref
from collections.abc import Callable

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from psycopg import pq

from dbutils.postgresql import urls as database_urls

CHANNEL = "auth_changed"


def notices_kept_by(version: str) -> bool:
    """Whether this psycopg release keeps a notice that arrives during another query (a COMMIT, the
    health check's SELECT 1) for ``notifies()``: from 3.2.4 on (psycopg pull request 975)."""
    release = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    return release is not None and tuple(int(part) for part in release.groups()) >= (3, 2, 4)


_NOTICES_KEPT = notices_kept_by(psycopg.__version__)

# The driver's connection -> {token key: (row, monotonic time read)}. Keyed by the connection, not
# the process: a LISTEN lasts as long as its session, and a new connection has heard nothing yet.
_kept: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()


def _kept_rows(using: str = DEFAULT_DB_ALIAS) -> dict | None:
    """The kept rows of this thread's connection to ``using``, emptied if a notice came since the
    last request; None where nothing may be kept."""
    connection = connections[using]
    if (not _NOTICES_KEPT or settings.API_TOKEN_CACHE_SIZE <= 0
            or connection.settings_dict["CONN_MAX_AGE"] == 0 or connection.in_atomic_block):
        return None
    # What Django does before a request's first query: a connection the server closed is replaced.
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    driver = connection.connection
    if not connection.autocommit or driver.info.transaction_status != pq.TransactionStatus.IDLE:
        return None  # a LISTEN would wait for a commit, and notices for the transaction's end
    listener = driver if settings.DATABASE_POOLER != "transaction" else _direct_listener()
    if listener is None:
        return None
    kept, heard = _kept.get(listener), []
    if kept is None:
        # Listening before the first read: a change committed after this is heard of, one
        # committed before it is what the read sees. (A direct listener listened when it was made.)
        if listener is driver:
            with connection.cursor() as cursor:
                cursor.execute(f"LISTEN {CHANNEL}")
        kept = _kept[listener] = {}
    else:
        try:
            heard = list(listener.notifies(timeout=0))  # every notice that came, without waiting for one
        except psycopg.OperationalError:
            if listener is driver:
                raise
            heard = None  # the direct listener's session ended
        if heard:
            kept.clear()
    if listener is not driver and (heard is None or _ended(listener)):  # it may have missed a notice
        listener.close()
        _direct.connection = None
        return None
    return kept


def _ended(listener) -> bool:
    """Whether the direct listener's session is gone: once its notices are read, a live idle
    connection has nothing left to read, and a closed one (the server's farewell, its end) has."""
    if listener.closed or listener.broken or getattr(listener, "ended_by_server", False):
        return True
    readable, _, _ = select.select([listener.fileno()], [], [], 0)
    return bool(readable)


def _note_the_end(listener):
    """The server's FATAL (a terminated session, a shutdown) reaches an idle connection as a notice,
    before the connection closes: from then on it hears nothing."""
    def handler(diagnostic):
        if diagnostic.severity_nonlocalized in {"FATAL", "PANIC"}:
            listener.ended_by_server = True
    return handler


_direct = threading.local()
# A direct listener that cannot connect costs a request no more than this (it then reads its token).
LISTENER_CONNECT_TIMEOUT_SECONDS = 2
# After a failed connect the thread waits before the next try, twice as long after each failure up
# to the most: a server that is down costs the requests meanwhile no connect attempt (nor its
# timeout), and one that is back is listened to again within the longest wait.
LISTENER_RETRY_FIRST_SECONDS = 0.5
LISTENER_RETRY_MOST_SECONDS = 30.0


def _direct_listener() -> "psycopg.Connection | None":
    """Behind a pooler in transaction mode, this thread's own connection straight to the server
    (DATABASE_LISTEN_URL), listening: a LISTEN through the pooler would stay on a server connection
    that other clients' transactions then use. None without that URL (nothing is kept) or while the
    server does not answer it (tried again after a back-off). A new one has heard nothing, so it
    starts with nothing kept."""
    if not settings.DATABASE_LISTEN_URL:
        return None
    listener = getattr(_direct, "connection", None)
    if listener is None or listener.closed or listener.broken:
        if time.monotonic() < getattr(_direct, "retry_at", 0.0):
            return None
        try:
            params = database_urls.parse(settings.DATABASE_LISTEN_URL)
            listener = psycopg.connect(**database_urls.conninfo(params, application_name="token-rows-listener"),
                                       autocommit=True, connect_timeout=LISTENER_CONNECT_TIMEOUT_SECONDS)
            listener.add_notice_handler(_note_the_end(listener))
            listener.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error:
            _direct.failures = getattr(_direct, "failures", 0) + 1
            _direct.retry_at = time.monotonic() + retry_delay(_direct.failures)
            return None
        _direct.connection, _direct.failures, _direct.retry_at = listener, 0, 0.0
    return listener


def retry_delay(failures: int) -> float:
    """The wait before the next connect after ``failures`` failed ones in a row."""
    return min(LISTENER_RETRY_MOST_SECONDS, LISTENER_RETRY_FIRST_SECONDS * 2 ** min(failures - 1, 16))


def token_row(key: str, read: Callable[[str], tuple | None], using: str = DEFAULT_DB_ALIAS) -> tuple | None:
    """``read(key)``'s row for the token (read from ``using``), or the one kept since an earlier
    request. An unknown key's answer (None) is not kept: a client guessing keys fills nothing."""
    kept = _kept_rows(using)
    if kept is None:
        return read(key)
    now = time.monotonic()
    hit = kept.get(key)
    if hit is not None and now - hit[1] < settings.API_TOKEN_CACHE_SECONDS:
        return hit[0]
    row = read(key)
    kept.pop(key, None)
    if row is not None:
        if len(kept) >= settings.API_TOKEN_CACHE_SIZE:
            del kept[next(iter(kept))]  # the longest kept
        kept[key] = (row, now)
    return row
