"""gunicorn's settings file: gunicorn reads ./gunicorn.conf.py from the directory it starts in
(``make prod``, the Procfile and the benchmarks pass ``-c gunicorn.conf.py`` or run from the checkout).

- Metrics (docs/operations/monitoring.md): PROMETHEUS_MULTIPROC_DIR is set before any worker imports
  prometheus_client, a temporary directory of gunicorn's own when unset (deleted when it stops), else
  the one given; on start the files of processes no longer running are deleted (counters restart
  from zero, which Prometheus takes as a reset), and a dead worker is marked (``child_exit``).
- Logs (docs/operations/logging.md): with LOG_FORMAT=json gunicorn's own lines (start-up, workers,
  errors) are JSON as the application's are (audit.log_lines), and its access log is left out: the
  application writes one line per request with its request id, user, game, round and bet
  (audit.middleware, LOG_REQUESTS).
"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from monitoring.multiprocess import ensure_directory, remove_dead_files  # noqa: E402 - no Django there

_OWN_METRICS_DIR = None
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _OWN_METRICS_DIR = tempfile.mkdtemp(prefix="baccarat-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _OWN_METRICS_DIR
ensure_directory()


def on_starting(server):
    remove_dead_files(os.environ["PROMETHEUS_MULTIPROC_DIR"])


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    """In the master only (an atexit handler would run in every worker that exits)."""
    if _OWN_METRICS_DIR:
        shutil.rmtree(_OWN_METRICS_DIR, ignore_errors=True)


if os.environ.get("LOG_FORMAT", "plain").strip().lower() == "json":
    from audit.log_lines import logging_config

    logconfig_dict = logging_config("json", os.environ.get("LOG_LEVEL", "INFO"))
    logconfig_dict["loggers"].update({
        "gunicorn.error": {"handlers": [], "propagate": True},
        "gunicorn.access": {"handlers": [], "propagate": False, "level": "WARNING"},
    })
