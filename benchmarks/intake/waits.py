"""Where the bench database's connections spend a phase, sampled from pg_stat_activity and pg_locks:
idle (the application is working), running, or waiting (on which lock or I/O). The profile of
what is left beyond the statements themselves."""

import threading
from collections import Counter

from benchmarks.database import server_connection

SAMPLE_EVERY_SECONDS = 0.02

# The audit chain's advisory lock has a one-number key (objsubid 1), the rounds' gates two (objsubid 2).
_SAMPLE = """
    SELECT CASE
        WHEN waiting.objsubid = 1 THEN 'waiting: audit chain lock'
        WHEN waiting.objsubid = 2 THEN 'waiting: round gate'
        WHEN a.state = 'idle' THEN 'idle: between requests'
        WHEN a.state LIKE 'idle in transaction%%' THEN 'idle in transaction: the application mid-transaction'
        WHEN a.wait_event IS NULL THEN 'running'
        ELSE 'waiting: ' || a.wait_event_type || ' ' || a.wait_event
    END, count(*)
    FROM pg_stat_activity a
    LEFT JOIN LATERAL (
        SELECT l.objsubid FROM pg_locks l
        WHERE l.pid = a.pid AND NOT l.granted AND l.locktype = 'advisory' LIMIT 1
    ) waiting ON true
    WHERE a.datname = current_database() AND a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()
    GROUP BY 1
"""


class WaitSampler:
    """``with WaitSampler(params) as sampler: …`` then ``shares(sampler.counts)``: {state: fraction}."""

    def __init__(self, params: dict):
        self.params = params
        self.counts = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        with server_connection(self.params, dbname=self.params["NAME"], autocommit=True) as conn:
            while not self._stop.wait(SAMPLE_EVERY_SECONDS):
                for state, count in conn.execute(_SAMPLE).fetchall():
                    self.counts[state] += count


def shares(counts: Counter) -> dict:
    """{state: fraction} of the samples counted."""
    total = sum(counts.values())
    return {state: count / total for state, count in counts.most_common()} if total else {}
