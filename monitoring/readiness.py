"""Readiness: can this process serve? The primary database answers, every migration is applied, the
broker and the cache answer.

The checks run at once, each on a thread of its own, and the answer waits for them at most
READINESS_TIMEOUT_SECONDS: a check still running then is reported as ``timeout`` (its thread ends on
its own, bounded by the connection timeouts below). The database is asked on a connection of its
own, opened with ``connect_timeout`` and closed after: the process's persistent connection may be
the one that broke, and a probe should not wait in line behind a request. A result is reused for
READINESS_CACHE_SECONDS, so probes sent faster than that (several load balancers, or someone
hammering the URL) open no more connections. A failure is logged with its message; the answer
names only the check and the kind of error (it is public: an address or a user name stays out).
"""

import functools
import logging
import secrets
import threading
import time

import kombu
from django.conf import settings
from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.loader import MigrationLoader

logger = logging.getLogger(__name__)

CHECKS = ("database", "migrations", "broker", "cache")


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
    key, value = f"monitoring:ready:{secrets.token_hex(8)}", secrets.token_hex(8)
    cache.set(key, value, timeout=10)
    if cache.get(key) != value:
        raise RuntimeError("the cache did not give back what was written")
    cache.delete(key)


def _timed(function, *args) -> dict:
    """{check: error or None} from running ``function``, with the milliseconds it took."""
    started = time.perf_counter()
    try:
        errors = function(*args)
    except Exception as error:  # noqa: BLE001
        errors = error
    return {"errors": errors, "ms": round((time.perf_counter() - started) * 1000, 1)}


def run_checks() -> dict:
    """{check: {"ok": bool, "ms": …, "error": kind}} for every check of CHECKS."""
    timeout = settings.READINESS_TIMEOUT_SECONDS
    jobs = {
        ("database", "migrations"): (check_database, DEFAULT_DB_ALIAS, timeout),
        ("broker",): (check_broker, timeout),
        ("cache",): (check_cache, caches["default"]),  # this thread's client: its connections are reused
    }
    done = {}

    def run(names, job):
        done[names] = _timed(*job)  # one assignment: read whole or not at all

    threads = [threading.Thread(target=run, args=(names, job), daemon=True, name=f"ready-{names[0]}")
               for names, job in jobs.items()]
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    results = {}
    for names in jobs:
        outcome = done.get(names)
        for name in names:
            results[name] = _result(name, outcome)
    return {name: results[name] for name in CHECKS}


def _result(name: str, outcome: dict | None) -> dict:
    if outcome is None:
        logger.warning("readiness check %s did not answer within %s s", name, settings.READINESS_TIMEOUT_SECONDS)
        return {"ok": False, "error": "timeout"}
    errors = outcome["errors"]
    error = errors.get(name) if isinstance(errors, dict) else errors
    if error is None:
        return {"ok": True, "ms": outcome["ms"]}
    logger.warning("readiness check %s failed: %s: %s", name, type(error).__name__, error)
    return {"ok": False, "ms": outcome["ms"], "error": type(error).__name__}


class _Last:
    lock = threading.Lock()
    at = float("-inf")
    results: dict = {}


def readiness() -> tuple[bool, dict]:
    """(ready, body): every check's result, and the names of those failing; reused within READINESS_CACHE_SECONDS."""
    with _Last.lock:
        if time.monotonic() - _Last.at >= settings.READINESS_CACHE_SECONDS:
            _Last.results, _Last.at = run_checks(), time.monotonic()
        results = _Last.results
    failing = [name for name, result in results.items() if not result["ok"]]
    return not failing, {"status": "not ready" if failing else "ready", "failing": failing, "checks": results}
