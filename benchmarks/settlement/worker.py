"""(c) The worker path: real Celery worker processes running settlement.sweep, timed from send to done."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from celery import Celery
from django.conf import settings
from django.core.management.base import CommandError
from django.db import connection

from .data import T_BATCH, T_ROUND
from .measurement import Measurement, cpu_seconds, status_kb

READY_TIMEOUT = 120


def measure_worker(bets: int, *, broker: str, workers: int, batch_rounds: int) -> Measurement:
    """Start ``workers`` solo-pool workers on ``broker``, send each a sweep, and wait until no DEALT
    round is left that a sweep would still try; their logs are kept only when the run fails."""
    app = Celery("bench_settlement", broker=broker, set_as_current=False)
    app.conf.broker_connection_retry_on_startup = False
    # The product's queues and routes, so the sweeps go to the queue the workers take them from.
    app.conf.update(task_queues=settings.CELERY_TASK_QUEUES, task_default_queue=settings.CELERY_TASK_DEFAULT_QUEUE,
                    task_routes=settings.CELERY_TASK_ROUTES)
    _refuse_busy_broker(app, broker)
    application_name = f"bench-settlement-worker-{os.getpid()}"
    env = {
        **os.environ,
        # The worker's connection is named, so its backend (and the CPU it spends) can be found.
        "DATABASE_URL": _with_query(os.environ["DATABASE_URL"], application_name=application_name),
        "CELERY_BROKER_URL": broker,
        "DEBUG": "0",  # no query log in the worker
        "SECRET_KEY": os.environ.get("SECRET_KEY") or "bench-settlement-only-key",
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "baccarat_site.settings"),
        "SETTLEMENT_BATCH_ROUNDS": str(batch_rounds),
    }
    logdir = Path(tempfile.mkdtemp(prefix="bench_settlement_"))
    started_workers = []
    try:
        for index in range(1, workers + 1):
            name = f"bench{index}-{os.getpid()}@{socket.gethostname()}"
            log = open(logdir / f"worker{index}.log", "wb")  # noqa: SIM115 - closed below, once its worker stops
            process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "baccarat_site", "worker", "--pool=solo",
                 "--concurrency=1", "-n", name, "--without-mingle", "--without-gossip",
                 "--without-heartbeat", "-l", "INFO"],
                cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
            )
            started_workers.append((name, process, log))
        _wait_ready(app, started_workers, logdir)
        run = _settle(app, started_workers, logdir, bets, application_name)
    finally:
        for _, process, log in started_workers:
            _stop(process)
            log.close()
        app.close()
    shutil.rmtree(logdir, ignore_errors=True)  # kept when the run failed: the error names it
    _read_batches(run)
    return run


def _refuse_busy_broker(app: Celery, broker: str) -> None:
    """Other workers on the broker would take the bench's tasks; stale tasks would distort it."""
    try:
        others = app.control.ping(timeout=1.0)
    except Exception as error:  # whatever the transport raises: the broker is not usable
        raise CommandError(f"The broker {broker} does not answer: {error}") from None
    if others:
        names = ", ".join(name for reply in others for name in reply)
        raise CommandError(f"Workers already listen on {broker} ({names}); they would take the bench's "
                           "tasks. Stop them or pass another --broker.")
    app.control.purge()


def _settle(app: Celery, workers: list, logdir: Path, bets: int, application_name: str) -> Measurement:
    """Send the sweeps and poll until done, reading the CPU of the workers and of their backends."""
    run = Measurement(bets=bets, seconds=0.0, workers=len(workers))
    run.idle_kb = [status_kb(process.pid, "VmHWM") for _, process, _ in workers]
    worker_cpu = sum(cpu_seconds(process.pid) for _, process, _ in workers)
    backend_cpu = {}  # backend pid -> its CPU seconds when last seen
    timeout = max(300.0, bets / 500)
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        wall_start = cursor.fetchone()[0]
        autovacuum = set()
        started = time.perf_counter()
        for _ in workers:
            app.send_task("settlement.sweep")
        polls = 0
        while True:
            # The workers' database backends: found by name, their CPU read while they live
            # (a worker closes its connection when the task ends).
            if len(backend_cpu) < len(workers) or polls % 25 == 0:
                cursor.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", [application_name])
                for (pid,) in cursor.fetchall():
                    backend_cpu.setdefault(pid, 0.0)
            for pid in backend_cpu:
                backend_cpu[pid] = cpu_seconds(pid, default=backend_cpu[pid])
            cursor.execute(
                f"""SELECT EXISTS (SELECT 1 FROM {T_ROUND}
                                   WHERE status = 'DEALT' AND settlement_failures < %s)""",
                [settings.MAX_SETTLEMENT_FAILURES],
            )
            if not cursor.fetchone()[0]:
                break
            polls += 1
            if polls % 25 == 0:
                autovacuum |= _autovacuum_now(cursor)
            elapsed = time.perf_counter() - started
            dead = [name for name, process, _ in workers if process.poll() is not None]
            if dead or elapsed > timeout:
                why = f"workers exited: {dead}" if dead else f"rounds still DEALT after {elapsed:.0f} s"
                raise CommandError(f"The worker path did not finish ({why}); logs in {logdir}:\n" + _tail(workers))
            time.sleep(0.02)
        run.seconds = time.perf_counter() - started
        for pid in backend_cpu:
            backend_cpu[pid] = cpu_seconds(pid, default=backend_cpu[pid])
        cursor.execute(
            """SELECT relname FROM pg_stat_user_tables
               WHERE last_autovacuum >= %s OR last_autoanalyze >= %s""",
            [wall_start, wall_start],
        )
        autovacuum |= {name for (name,) in cursor.fetchall()}
        run.autovacuum = sorted(autovacuum)
    run.peak_kb = [status_kb(process.pid, "VmHWM") for _, process, _ in workers]
    worker_cpu = sum(cpu_seconds(process.pid) for _, process, _ in workers) - worker_cpu
    # A backend's CPU from its start: the worker connects when the task starts.
    run.cpu_seconds = worker_cpu + sum(backend_cpu.values()) if backend_cpu else None
    return run


def _read_batches(run: Measurement) -> None:
    """The batches the workers recorded: how many, the largest, and the time spent inside them."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT count(*) FILTER (WHERE outcome = 'ok'), count(*) FILTER (WHERE outcome = 'failed'),
                       COALESCE(max(bets), 0),
                       COALESCE(sum(extract(epoch FROM finished_at - started_at)) FILTER (WHERE outcome = 'ok'), 0)
                FROM {T_BATCH}"""
        )
        run.batches, run.failed_batches, run.largest_batch, in_batch = cursor.fetchone()
        run.in_batch_seconds = float(in_batch)
    if run.failed_batches:
        run.problems.append(f"{run.failed_batches} failed batches")


def _with_query(url: str, **params) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.update(params)
    return urlunsplit(parts._replace(query=urlencode(query)))


def _wait_ready(app: Celery, workers: list, logdir: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    waiting = {name for name, _, _ in workers}
    while waiting:
        for name, process, _ in workers:
            if process.poll() is not None:
                raise CommandError(f"The worker {name} exited with {process.returncode}; logs in {logdir}:\n"
                                   + _tail(workers))
        if time.monotonic() > deadline:
            raise CommandError(f"The workers did not answer within {READY_TIMEOUT} s; logs in {logdir}:\n"
                               + _tail(workers))
        replies = app.control.ping(destination=sorted(waiting), timeout=0.5)
        for reply in replies:
            waiting -= set(reply)


def _autovacuum_now(cursor) -> set:
    """The tables autovacuum is working on in this database right now."""
    cursor.execute(
        """SELECT query FROM pg_stat_activity
           WHERE backend_type = 'autovacuum worker' AND datname = current_database()"""
    )
    return {query.split()[-1].split(".")[-1] for (query,) in cursor.fetchall() if query}


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)  # warm shutdown: the current task (if any) finishes
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _tail(workers: list) -> str:
    text = []
    for name, _, log in workers:
        log.flush()
        lines = Path(log.name).read_text(errors="replace").splitlines()[-30:]
        text.append(f"--- {name}\n" + "\n".join(lines))
    return "\n".join(text)
