"""Running calls at once, for the race tests on PostgreSQL."""

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from django.db import connections, transaction

from core.errors import Conflict


def together(calls):
    """Run the calls at once, each in a thread with its own connection: their results (or errors), in order."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        try:
            barrier.wait()
            return call()
        except Exception as error:  # noqa: BLE001 - the test inspects every outcome
            return error
        finally:
            connections.close_all()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def conflict_codes(outcomes, done: str) -> list:
    """``done`` for each call that returned, the code of each Conflict, sorted; any other error is raised."""
    codes = []
    for outcome in outcomes:
        if isinstance(outcome, Conflict):
            codes.append(outcome.code)
        elif isinstance(outcome, Exception):
            raise outcome
        else:
            codes.append(done)
    return sorted(codes)


@contextmanager
def held_open(call, seconds: float):
    """Inside, ``call()`` has run in a transaction of its own (in a thread, with its own connection)
    that stays open, holding its locks, until the block ends or ``seconds`` pass."""
    holding, release = threading.Event(), threading.Event()

    def run():
        try:
            with transaction.atomic():
                call()
                holding.set()
                release.wait(seconds)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert holding.wait(10), "the held call did not finish"
        yield
    finally:
        release.set()
        thread.join(seconds + 10)


def started(call) -> Future:
    """``call()`` started in a thread of its own, with its own connection: its Future (to wait for
    once whatever it waits for, a lock that held_open keeps, has been released)."""
    future = Future()

    def run():
        try:
            future.set_result(call())
        except Exception as error:  # noqa: BLE001 - the test inspects the outcome
            future.set_exception(error)
        finally:
            connections.close_all()

    threading.Thread(target=run, daemon=True).start()
    return future


def wait_for_lock_waiters(count: int = 1, seconds: float = 10) -> None:
    """Until ``count`` sessions wait for a lock (pg_locks: a call in another thread has come to the
    lock a held transaction keeps), so that a race is run in the order the test means, not by luck."""
    from django.db import connection

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(DISTINCT pid) FROM pg_locks WHERE NOT granted")
            if cursor.fetchone()[0] >= count:
                return
        time.sleep(0.01)
    raise AssertionError(f"{count} session(s) did not come to wait for a lock within {seconds} s")
