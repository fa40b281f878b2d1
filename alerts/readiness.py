"""The readiness probes, written once: the database answers and every migration is applied, the
broker and the cache answer. Two callers run them:

- the web's ``/-/ready`` (monitoring.readiness): each probe on a thread of its own under a deadline,
  the answer reused for a few seconds, and public (it names only the kind of error);
- the minute's alert task, through ``problems`` (the ``readiness`` check of a worker): a database
  down is seen there only from outside, since the alert is stored in it.

A check raises what went wrong. The database is asked on a connection of its own, opened with
``connect_timeout`` and closed after: the process's persistent connection may be the one that broke,
and a probe should not wait in line behind a request.
"""

import functools
import secrets

import kombu
from django.conf import settings
from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.loader import MigrationLoader

# How long the alert task's probes wait for the broker and the database to answer.
PROBE_TIMEOUT_SECONDS = 3


class MigrationsMissing(Exception):
    pass


@functools.cache
def expected_migrations() -> frozenset:
    """The latest migration of every app, read from disk once per process (they do not change while it runs)."""
    return frozenset(MigrationLoader(None, ignore_no_migrations=True).graph.leaf_nodes())


def _probe_connection(alias: str, timeout: float):
    """A new connection to ``alias`` that gives up connecting after ``timeout`` (libpq: 2 s at least)."""
    wrapper = connections.create_connection(alias)
    options = {**wrapper.settings_dict.get("OPTIONS", {}), "connect_timeout": max(2, round(timeout))}
    wrapper.settings_dict = {**wrapper.settings_dict, "OPTIONS": options}
    return wrapper


def check_database(alias: str, timeout: float) -> dict:
    """{"database": error or None, "migrations": error or None}, from one connection."""
    wrapper = _probe_connection(alias, timeout)
    try:
        try:
            with wrapper.cursor() as cursor:
                cursor.execute("SELECT 1")
        except Exception as error:  # noqa: BLE001 - any failure to connect or answer is "not ready"
            return {"database": error, "migrations": error}
        try:
            with wrapper.cursor() as cursor:
                cursor.execute("SELECT app, name FROM django_migrations")
                applied = set(cursor.fetchall())
            missing = sorted(expected_migrations() - applied)
            if missing:
                raise MigrationsMissing(f"{len(missing)} not applied, e.g. {'.'.join(missing[0])}")
        except Exception as error:  # noqa: BLE001
            return {"database": None, "migrations": error}
        return {"database": None, "migrations": None}
    finally:
        wrapper.close()


def check_broker(timeout: float) -> None:
    """Connect to the Celery broker once, without retrying; nothing to check when tasks run in-process."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    options = {"socket_connect_timeout": timeout, "socket_timeout": timeout}
    with kombu.Connection(settings.CELERY_BROKER_URL, connect_timeout=timeout, transport_options=options) as broker:
        broker.ensure_connection(max_retries=0, timeout=timeout)


def check_cache(cache) -> None:
    """A value written to the cache reads back."""
    key, value = f"readiness:{secrets.token_hex(8)}", secrets.token_hex(8)
    cache.set(key, value, timeout=10)
    if cache.get(key) != value:
        raise RuntimeError("the cache did not give back what was written")
    cache.delete(key)


# --- The alert task's probes: each answers a problem as the alert words it, or None ---------------

def _problem(what: str, check, *args) -> str | None:
    try:
        check(*args)
    except Exception as error:  # noqa: BLE001 - whatever a client raises, the service is not usable
        return f"{what} ({type(error).__name__})"
    return None


def broker() -> str | None:
    return _problem("the broker is not reachable", check_broker, PROBE_TIMEOUT_SECONDS)


def cache_answers() -> str | None:
    return _problem("the cache is not reachable or does not keep what it is given", check_cache, caches["default"])


def migrations_current(using: str = DEFAULT_DB_ALIAS) -> str | None:
    error = check_database(using, PROBE_TIMEOUT_SECONDS)["migrations"]
    if error is None:
        return None
    if isinstance(error, MigrationsMissing):
        return f"migrations {error}"
    return f"the database is not reachable ({type(error).__name__})"


PROBES = {"broker": broker, "cache": cache_answers, "migrations": migrations_current}


def problems() -> list:
    """The problems of every probe, in the registry's order."""
    return [problem for probe in PROBES.values() if (problem := probe()) is not None]
