"""The body of /metrics: every process's metrics and the database's figures, in the text format.

Under gunicorn and Celery (PROMETHEUS_MULTIPROC_DIR set) the processes' metrics are read from that
directory, summed over every process that wrote there, the dead ones' included; otherwise they are
this process's (with its CPU, memory and file descriptors). This process's pending counts are
written first (monitoring.batching); the other processes' are at most METRICS_FLUSH_SECONDS old.
"""

import os

from django.db import DEFAULT_DB_ALIAS
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from monitoring.collector import DatabaseCollector, ReadinessCollector
from monitoring.metrics import PENDING

# The text format every Prometheus reads (the names here need none of 1.0.0's escaping).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _ThisProcess:
    """The default registry's metrics, as one collector of another registry."""

    def collect(self):
        return REGISTRY.collect()


def exposition() -> tuple[bytes, str]:
    PENDING.flush()
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        MultiProcessCollector(registry)
    else:
        registry.register(_ThisProcess())
    registry.register(DatabaseCollector(DEFAULT_DB_ALIAS))
    registry.register(ReadinessCollector())
    return generate_latest(registry), CONTENT_TYPE
