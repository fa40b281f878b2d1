"""The metrics each process counts (prometheus_client): HTTP requests, bets, settlement and Celery tasks.

Under gunicorn and Celery's prefork pool every process writes its own values to files in
PROMETHEUS_MULTIPROC_DIR (prometheus_client's multiprocess mode, chosen when prometheus_client is
first imported), and /metrics sums them over the processes, the dead ones' counts included. Without
that directory (runserver, the tests) they live in the process, in the default registry.
The figures read from the database (backlogs, pending work) are not here: ``collector`` reads them
when /metrics is scraped.

The request path's metrics (HTTP requests, bets) are counted through ``PENDING`` (monitoring.batching:
in memory, written every METRICS_FLUSH_SECONDS); settlement and Celery tasks, off that path, are
observed on their metrics directly.
"""

from django.conf import settings
from prometheus_client import Counter, Histogram

from monitoring.batching import batch
from monitoring.multiprocess import ensure_directory

ensure_directory()  # before the first value's file is made (a Celery worker may start before gunicorn made it)

# Seconds: a plain bet takes a few milliseconds, a bulk request or a page tens to hundreds.
LATENCY_BUCKETS = (0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
QUERY_BUCKETS = (0, 1, 2, 3, 5, 10, 20, 50, 100, 250)
BULK_SIZE_BUCKETS = (1, 10, 50, 100, 250, 500, 1000)
LAG_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800)
TASK_BUCKETS = (0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)

HTTP_LATENCY = Histogram("baccarat_http_request_duration_seconds", "Time to answer an HTTP request, by view",
                         ["view", "method", "status"], buckets=LATENCY_BUCKETS)
HTTP_QUERIES = Histogram("baccarat_http_request_queries", "Database queries run by one HTTP request, by view",
                         ["view", "method"], buckets=QUERY_BUCKETS)

BETS_ACCEPTED = Counter("baccarat_bets_accepted", "New bets accepted through the API (replays not counted)",
                        ["game", "bet_type"])
BETS_REFUSED = Counter("baccarat_bets_refused", "Bets refused through the API, by reason", ["reason"])
BULK_SIZE = Histogram("baccarat_bet_bulk_request_size", "Bets in one bulk request (its count: the bulk requests)",
                      buckets=BULK_SIZE_BUCKETS)

SETTLEMENT_LAG = Histogram("baccarat_settlement_lag_seconds", "Seconds from a round's deal to its settlement",
                           buckets=LAG_BUCKETS)
SETTLEMENT_BATCHES = Counter("baccarat_settlement_batches", "Settlement batches, by outcome (ok, failed)",
                             ["outcome"])

TASK_DURATION = Histogram("baccarat_celery_task_duration_seconds", "Run time of a Celery task, by task and queue",
                          ["task", "queue"], buckets=TASK_BUCKETS)
TASK_FAILURES = Counter("baccarat_celery_task_failures", "Celery tasks that raised, by task and queue",
                        ["task", "queue"])


PENDING = batch(settings.METRICS_FLUSH_SECONDS)
