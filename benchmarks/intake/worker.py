"""One Celery worker settling what the bench deals, on a broker of the bench's own."""

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

from celery import Celery
from django.conf import settings
from django.core.management.base import CommandError

READY_TIMEOUT = 120


@contextmanager
def settlement_worker(database_url: str, broker: str):
    """A solo-pool worker on ``broker``, ready; stopped on the way out."""
    app = Celery("bench_intake", broker=broker, set_as_current=False)
    app.conf.broker_connection_retry_on_startup = False
    try:
        others = app.control.ping(timeout=1.0)
    except Exception as error:  # whatever the transport raises: the broker is not usable
        raise CommandError(f"The broker {broker} does not answer: {error}") from None
    if others:
        raise CommandError(f"Workers already listen on {broker}; they would take the bench's tasks. "
                           "Stop them or pass another --broker.")
    app.control.purge()
    name = f"intake-bench-{os.getpid()}@{socket.gethostname()}"
    env = {**os.environ, "DATABASE_URL": database_url, "CELERY_BROKER_URL": broker, "DEBUG": "0",
           "SECRET_KEY": secrets.token_urlsafe(40), "LOG_LEVEL": "WARNING"}
    if os.geteuid() == 0:  # knowingly, as `make prod-worker` without PROD_USER: a JSON-only worker takes no pickle
        env["PYTHONWARNINGS"] = "ignore:You're running the worker with superuser privileges"
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "baccarat_site", "worker", "--pool=solo", "-n", name,
         "--without-mingle", "--without-gossip", "--without-heartbeat", "-l", "WARNING"],
        cwd=settings.BASE_DIR, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while not app.control.ping(destination=[name], timeout=0.5):
            if process.poll() is not None or time.monotonic() > deadline:
                raise CommandError(f"the settlement worker did not start (exit {process.poll()})")
        yield
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        app.close()
