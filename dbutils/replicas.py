"""Read replicas: their aliases, how far behind the primary each is, and which one a read may use.

settings.DATABASE_REPLICAS names the aliases of the hot standbys (REPLICA_DATABASE_URL). Lag is
measured against the primary: a replica that has replayed everything the primary has written
(``pg_last_wal_replay_lsn() >= pg_current_wal_lsn()``) is 0 s behind, however long ago the last
transaction was (an idle primary writes none); otherwise it is as old as its last replayed
transaction (``now() - pg_last_xact_replay_timestamp()``). A measurement is kept
REPLICA_LAG_CACHE_SECONDS per process. A replica that does not answer (or is no standby) is set
aside for REPLICA_RETRY_SECONDS and reads go to the primary meanwhile; the alerts' ``replicas``
check raises an alert. Nothing here writes, and nothing here ever raises for a replica's sake.
"""

import logging
import random
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

logger = logging.getLogger(__name__)

LAG_SQL = ("SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn() >= %s::pg_lsn, "
           "EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8")


class NotAStandby(DatabaseError):
    """The alias answers, but is not in recovery: a promoted or wrongly named server, not a replica."""


@dataclass(frozen=True)
class Health:
    alias: str
    lag: float | None  # seconds behind the primary; None: it did not answer (see error)
    error: str = ""

    @property
    def usable(self) -> bool:
        return self.lag is not None and self.lag <= settings.REPLICA_MAX_LAG_SECONDS


@dataclass
class _Known:
    health: Health
    until: float  # monotonic: measured again after this


_known: dict[str, _Known] = {}
_lock = threading.Lock()


def aliases() -> list:
    return list(getattr(settings, "DATABASE_REPLICAS", ()))


def _connect(alias: str) -> None:
    """Open the replica's connection, or check the open one (once a request): a dead replica fails
    here, within the alias's short connect_timeout."""
    connection = connections[alias]
    connection.close_if_health_check_failed()
    connection.ensure_connection()


def measure(alias: str) -> Health:
    """The replica's lag now (a query on the primary, then one on the replica); its error if it fails."""
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn()")
            primary_lsn = cursor.fetchone()[0]
    except DatabaseError as error:  # the primary's trouble is not the replica's: no verdict on it
        return Health(alias, None, f"the primary's position could not be read: {error}")
    replica = connections[alias]
    try:
        _connect(alias)
        with replica.cursor() as cursor:
            cursor.execute(LAG_SQL, [primary_lsn])
            in_recovery, caught_up, seconds = cursor.fetchone()
        if not in_recovery:
            raise NotAStandby(f"{alias} is not in recovery")
    except DatabaseError as error:
        replica.close()  # reconnect from scratch next time
        return Health(alias, None, str(error).strip() or type(error).__name__)
    if caught_up:
        return Health(alias, 0.0)
    return Health(alias, float("inf") if seconds is None else max(seconds, 0.0))


def health(alias: str) -> Health:
    """The replica's health as this process last measured it, measured again once that is older than
    REPLICA_LAG_CACHE_SECONDS (REPLICA_RETRY_SECONDS after a failure)."""
    now = time.monotonic()
    known = _known.get(alias)
    if known is not None and now < known.until:
        return known.health
    current = measure(alias)
    if current.lag is None:
        logger.warning("replica %s set aside for %s s, reads go to the primary: %s", alias,
                       settings.REPLICA_RETRY_SECONDS, current.error)
    wait = settings.REPLICA_RETRY_SECONDS if current.lag is None else settings.REPLICA_LAG_CACHE_SECONDS
    with _lock:
        _known[alias] = _Known(current, time.monotonic() + wait)
    return current


def usable_replica() -> Health | None:
    """A replica that answers and is at most REPLICA_MAX_LAG_SECONDS behind (any one of them), or None.
    Its connection is open and checked: a read on it that fails now is a replica that died since."""
    candidates = aliases()
    random.shuffle(candidates)  # the reads spread over the replicas
    for alias in candidates:
        current = health(alias)
        if not current.usable:
            continue
        try:
            _connect(alias)
        except DatabaseError as error:
            connections[alias].close()
            with _lock:
                _known[alias] = _Known(Health(alias, None, str(error).strip()),
                                       time.monotonic() + settings.REPLICA_RETRY_SECONDS)
            logger.warning("replica %s set aside for %s s: %s", alias, settings.REPLICA_RETRY_SECONDS, error)
            continue
        return current
    return None


def forget() -> None:
    """Measure every replica afresh at its next use (tests; after a replica is replaced)."""
    with _lock:
        _known.clear()
