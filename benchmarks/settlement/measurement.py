"""One timed settlement, and the figures of a process read from /proc."""

import os
from dataclasses import dataclass, field

from django.core.management.base import CommandError


@dataclass
class Measurement:
    """One timed settlement: wall-clock seconds, and the CPU seconds of the processes doing it (the
    Python process and its PostgreSQL backend), which other load on the machine disturbs less."""

    bets: int
    seconds: float
    cpu_seconds: float | None = None
    workers: int = 0
    idle_kb: list = field(default_factory=list)
    peak_kb: list = field(default_factory=list)
    batches: int = 0
    failed_batches: int = 0
    largest_batch: int = 0
    in_batch_seconds: float = 0.0
    autovacuum: list = field(default_factory=list)
    problems: list = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.bets / self.seconds

    @property
    def cpu_rate(self) -> float | None:
        return self.bets / self.cpu_seconds if self.cpu_seconds else None


def cpu_seconds(pid: int, default: float | None = None) -> float:
    """User + system CPU seconds a process has used (/proc/<pid>/stat); ``default`` once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        if default is None:
            raise
        return default
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_kb(pid: int, key: str) -> int:
    """A value in kB of /proc/<pid>/status (VmHWM: the process's peak resident memory)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise CommandError(f"No {key} in /proc/{pid}/status")


def backend_pid(cursor) -> int:
    """The process id of the PostgreSQL backend serving this connection."""
    cursor.execute("SELECT pg_backend_pid()")
    return cursor.fetchone()[0]
