"""Where a phase's CPU went, read from /proc (Linux): the bench's gunicorn (master and workers), the
PostgreSQL server's processes, the load client (this process) and everything else on the machine,
and how much of it stayed idle. Per request, it says what a bet costs beyond a 404 and on which
side; the idle share says whether the phase was bound by the CPU.

PostgreSQL's share is the whole server's, the wait sampler's own queries (one every 20 ms) among
them; on a machine where nothing else uses that server they are all that is not the bench's.
"""

import os
from collections import Counter

PARTS = ("server", "database", "client", "other")


def available(proc: str = "/proc") -> bool:
    return os.path.exists(os.path.join(proc, "stat"))


def _ticks(stat: bytes) -> tuple[bytes, int]:
    """(command name, user + system clock ticks) of a /proc/<pid>/stat line."""
    name, _, rest = stat.partition(b"(")[2].rpartition(b")")
    fields = rest.split()
    return name, int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of proc(5)


def processes(port: int, proc: str = "/proc") -> dict:
    """{pid: (part, clock ticks used so far)} of the processes that belong to a part."""
    marker = f"--bind\x00127.0.0.1:{port}\x00".encode()
    own = str(os.getpid())
    found = {}
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        try:
            with open(os.path.join(proc, pid, "stat"), "rb") as stat_file:
                name, ticks = _ticks(stat_file.read())
            with open(os.path.join(proc, pid, "cmdline"), "rb") as cmdline_file:
                cmdline = cmdline_file.read()
        except OSError:  # it ended meanwhile
            continue
        if pid == own:
            found[pid] = ("client", ticks)
        elif b"gunicorn" in cmdline and marker in cmdline:
            found[pid] = ("server", ticks)
        elif name == b"postgres":
            found[pid] = ("database", ticks)
    return found


def machine(proc: str = "/proc") -> Counter:
    """The clock ticks of every CPU so far: ``busy`` and ``idle`` (or waiting for I/O)."""
    with open(os.path.join(proc, "stat"), "rb") as stat_file:
        user, nice, system, idle, iowait, irq, softirq = (int(value) for value in stat_file.readline().split()[1:8])
    # Time stolen by the hypervisor is neither: the machine neither ran nor offered it.
    return Counter(busy=user + nice + system + irq + softirq, idle=idle + iowait)


def used_between(start: dict, end: dict) -> Counter:
    """The ticks each part used from one ``processes`` reading to the next. A process that began
    meanwhile counts from zero; one that ended is left out (its ticks went with it)."""
    used = Counter()
    for pid, (part, ticks) in end.items():
        _part, before = start.get(pid, (part, 0))
        used[part] += ticks - before
    return used


class CpuSampler:
    """``with CpuSampler(port) as cpu: …`` then ``cpu.used``: the ticks each part and the machine
    used meanwhile (nothing where there is no /proc)."""

    def __init__(self, port: int, proc: str = "/proc"):
        self.port, self.proc = port, proc
        self.used = Counter()

    def __enter__(self):
        self._start = (processes(self.port, self.proc), machine(self.proc)) if available(self.proc) else None
        return self

    def __exit__(self, *exc):
        if self._start is not None:
            started, machine_started = self._start
            self.used = used_between(started, processes(self.port, self.proc))
            self.used.update(machine(self.proc) - machine_started)


def per_request(used: Counter, requests: int) -> dict:
    """{part: CPU milliseconds per request, "other" being the machine's rest}, their sum as "all",
    and the machine's idle share as "idle"."""
    if not requests or not used.get("busy", 0) + used.get("idle", 0):
        return {}
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    known = sum(used[part] for part in PARTS if part != "other")
    figures = {part: used[part] * tick_ms / requests for part in PARTS if part != "other"}
    figures["other"] = max(0, used["busy"] - known) * tick_ms / requests
    figures["all"] = sum(figures.values())
    figures["idle"] = used["idle"] / (used["busy"] + used["idle"])
    return figures
