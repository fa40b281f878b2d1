"""The request path's counts, kept in the process's memory and written to prometheus_client in batches.

In multiprocess mode every observation of a prometheus_client histogram takes a lock, asks the
kernel for the process id and packs two values into its mmap file, twice (its bucket and its sum); a
bet's request made five such writes, which measured through gunicorn were several per cent of the
bet. ``Batched`` instead adds each observation to plain counts in this process (per metric and label
values: a count per bucket and a sum) and writes their totals to the metrics' values once every
METRICS_FLUSH_SECONDS, from a thread of its own, and whenever this process answers a scrape or
exits. So /metrics shows every count once its process has written it: this process's at once,
another's at most METRICS_FLUSH_SECONDS later. A process killed outright (SIGKILL: gunicorn's
timeout) loses at most that interval's counts. Decision record: docs/decisions/0009.

``Direct`` observes each value on prometheus_client's metric at once (METRICS_FLUSH_SECONDS=0), as
the framework's own path does; both take the same calls.
"""

import atexit
import bisect
import logging
import os
import threading
import time

logger = logging.getLogger(__name__)

_children: dict = {}


def labelled(metric, *labels):
    """The metric's child for these label values, found once per process (``labels()`` takes a lock
    and checks the values every time); the metric itself when it has no labels."""
    if not labels:
        return metric
    children = _children.setdefault(metric, {})
    child = children.get(labels)
    if child is None:
        child = children[labels] = metric.labels(*labels)
    return child


class Direct:
    """Each observation written to prometheus_client's metric as it comes."""

    def observe(self, histogram, labels: tuple, value: float) -> None:
        labelled(histogram, *labels).observe(value)

    def inc(self, counter, labels: tuple, amount: float = 1) -> None:
        labelled(counter, *labels).inc(amount)

    def flush(self) -> None:
        """Nothing is kept."""


class Batched:
    """Observations counted in memory, written every ``seconds`` (and at a scrape, and at exit)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._lock = threading.Lock()  # the pending counts, between a request and the writer thread
        self._writing = threading.Lock()  # one write at a time: a scrape's waits for the thread's
        self._pending: dict = {}  # (metric, label values) → [count per bucket…, sum], or the counter's amount
        self._thread = None
        os.register_at_fork(after_in_child=self._forked)
        atexit.register(self.flush)

    def observe(self, histogram, labels: tuple, value: float) -> None:
        key = (histogram, labels)
        bounds = histogram._upper_bounds  # its buckets' upper bounds, +Inf last
        with self._lock:
            counts = self._pending.get(key)
            if counts is None:
                counts = self._pending[key] = [0] * (len(bounds) + 1)
            # The first bucket whose bound is not below the value, as Histogram.observe picks it.
            counts[bisect.bisect_left(bounds, value)] += 1
            counts[-1] += value
        if self._thread is None:
            self._start()

    def inc(self, counter, labels: tuple, amount: float = 1) -> None:
        key = (counter, labels)
        with self._lock:
            self._pending[key] = self._pending.get(key, 0) + amount
        if self._thread is None:
            self._start()

    def flush(self) -> None:
        """Write the counts kept so far to the metrics' values."""
        with self._writing:
            with self._lock:
                pending, self._pending = self._pending, {}
            for (metric, labels), counts in pending.items():
                child = labelled(metric, *labels)
                if isinstance(counts, list):
                    # A histogram child's values: one per bucket (not cumulative), and the sum.
                    for bucket, count in zip(child._buckets, counts[:-1], strict=True):
                        if count:
                            bucket.inc(count)
                    child._sum.inc(counts[-1])
                else:
                    child.inc(counts)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._write_every_interval, name="metrics-writer", daemon=True)
                self._thread.start()

    def _write_every_interval(self) -> None:
        while True:
            time.sleep(self.seconds)
            try:
                self.flush()
            except Exception:  # logged, and the next interval writes again (this one's counts are lost)
                logger.exception("metrics: writing the pending counts failed")

    def _forked(self) -> None:
        """In a new child process: the parent's counts are the parent's to write, and no thread runs here."""
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        self._pending = {}
        self._thread = None


def batch(seconds: float) -> Batched | Direct:
    return Batched(seconds) if seconds > 0 else Direct()
