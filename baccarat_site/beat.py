"""Celery beat's scheduler: django_celery_beat's, run by one beat at a time.

Two beats would send every periodic task twice (two sweeps, two head signings a minute). So before it
reads its schedule a beat takes a PostgreSQL advisory lock, held by its session, on a connection of
its own straight to the server: DATABASE_LISTEN_URL when set (through a pooler in transaction mode a
session's lock would stay on a server connection others then use), else DATABASE_URL. A second beat
logs that it waits and tries again every CELERY_BEAT_LOCK_RETRY_SECONDS; it takes over once the
first one's session ends (stopped, killed, or its host gone, which the connection's TCP keepalives
reveal to the server). Before each tick the holder looks at its connection without a round trip
(a closed one has something to read); if the connection is gone it exits, for its supervisor to
restart it: another beat may hold the lock by then.
"""

import logging
import select
import time

import psycopg
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connections
from django_celery_beat.schedulers import DatabaseScheduler

from dbutils.postgresql import urls as database_urls

logger = logging.getLogger(__name__)

# The advisory lock's two keys: a class of its own (beside the rounds' gates, games.locks) and 1.
LOCK_KEYS = (0x0BEA, 1)
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}


def lock_conninfo() -> dict:
    """psycopg's keywords for the beat's own connection, straight to the server."""
    if settings.DATABASE_LISTEN_URL:
        params = database_urls.parse(settings.DATABASE_LISTEN_URL)
    elif settings.DATABASE_POOLER == "transaction":
        raise ImproperlyConfigured("behind a pooler in transaction mode, beat's lock needs DATABASE_LISTEN_URL, "
                                   "a direct connection to the server")
    else:
        params = connections["default"].settings_dict
    return database_urls.conninfo(params, application_name="celery-beat-lock", **_KEEPALIVES)


def acquire(retry_seconds: float) -> psycopg.Connection:
    """The connection holding the lock, once it is held (waiting as long as another beat holds it)."""
    waiting_since = None
    while True:
        connection = psycopg.connect(**lock_conninfo(), autocommit=True)
        if connection.execute("SELECT pg_try_advisory_lock(%s, %s)", LOCK_KEYS).fetchone()[0]:
            if waiting_since is not None:
                logger.info("beat lock taken after %.1fs: this beat now sends the periodic tasks",
                            time.monotonic() - waiting_since)
            else:
                logger.info("beat lock taken: this beat sends the periodic tasks")
            return connection
        connection.close()
        if waiting_since is None:
            waiting_since = time.monotonic()
            logger.warning("beat lock held by another beat: waiting (retrying every %ss)", retry_seconds)
        time.sleep(retry_seconds)


def still_held(connection: psycopg.Connection) -> bool:
    """Whether the lock's session is still there: idle, it has nothing to read unless it ended."""
    if connection.closed or connection.broken:
        return False
    readable, _, _ = select.select([connection.fileno()], [], [], 0)
    if not readable:
        return True
    try:
        connection.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


class LockedDatabaseScheduler(DatabaseScheduler):
    _lock_connection = None

    def setup_schedule(self):
        # Not in __init__: beat also makes a lazy scheduler (its banner), which reads no schedule.
        self._lock_connection = acquire(settings.CELERY_BEAT_LOCK_RETRY_SECONDS)
        super().setup_schedule()

    def tick(self, *args, **kwargs):
        if self._lock_connection is None or not still_held(self._lock_connection):
            logger.error("beat lock's connection lost: exiting, another beat may hold the lock now")
            raise SystemExit(1)
        return super().tick(*args, **kwargs)

    def close(self):
        super().close()
        if self._lock_connection is not None:
            self._lock_connection.close()
