"""What a worker needs to serve, probed by the minute's alert task (the ``readiness`` check): the
broker reachable, the cache answering, the database's migrations current. The database itself is
probed by the task reaching it at all: an alert is stored there, so a database down is seen only
from outside (the web's readiness endpoint, the orchestrator). Each probe answers a problem, or None.

``PROBES`` is the registry: another readiness view may run the same probes, or add its own.
"""

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

BROKER_TIMEOUT_SECONDS = 3


def broker() -> str | None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None  # tasks run in-process: there is no broker to reach
    try:
        with current_app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
    except Exception as error:  # noqa: BLE001 - whatever the transport raises, the broker is not reachable
        return f"the broker is not reachable ({type(error).__name__})"
    return None


def cache_answers() -> str | None:
    try:
        cache.set("alerts:readiness", 1, timeout=60)
        answered = cache.get("alerts:readiness") == 1
    except Exception as error:  # noqa: BLE001 - a cache client raises its own errors
        return f"the cache is not reachable ({type(error).__name__})"
    return None if answered else "the cache does not keep what it is given"


def migrations_current(using: str = DEFAULT_DB_ALIAS) -> str | None:
    executor = MigrationExecutor(connections[using])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        return f"{len(plan)} migration(s) not applied (first {plan[0][0].app_label}.{plan[0][0].name})"
    return None


PROBES = {"broker": broker, "cache": cache_answers, "migrations": migrations_current}


def problems() -> list:
    """The problems of every probe, in the registry's order."""
    return [problem for probe in PROBES.values() if (problem := probe()) is not None]
