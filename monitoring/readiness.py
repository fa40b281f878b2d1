"""Readiness: can this process serve? The primary database answers, every migration is applied, the
broker and the cache answer: the checks of alerts.readiness, which the alert task runs too.

The checks run at once, each on a thread of its own, and the answer waits for them at most
READINESS_TIMEOUT_SECONDS: a check still running then is reported as ``timeout`` (its thread ends on
its own, bounded by the connection timeouts of the checks). A result is reused for
READINESS_CACHE_SECONDS, so probes sent faster than that (several load balancers, or someone
hammering the URL) open no more connections. A failure is logged with its message; the answer
names only the check and the kind of error (it is public: an address or a user name stays out).
"""

import logging
import threading
import time

from django.conf import settings
from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS

from alerts.readiness import check_broker, check_cache, check_database

logger = logging.getLogger(__name__)

CHECKS = ("database", "migrations", "broker", "cache")


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
