"""Running calls at once, for the race tests on PostgreSQL."""

import threading
from concurrent.futures import ThreadPoolExecutor
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
