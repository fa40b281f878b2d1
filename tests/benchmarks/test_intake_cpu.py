"""bench_intake's CPU split: which processes count as the server, the database and the client, and
the figures per request."""

import os
import sys
import time
from collections import Counter

import pytest

from benchmarks.intake.cpu import CpuSampler, available, machine, per_request, processes, used_between

PORT = 18765
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def _process(proc, pid, name: str, utime: int, stime: int, cmdline: list) -> None:
    directory = proc / str(pid)
    directory.mkdir()
    # proc(5): pid (comm) state, then fields 4 to 13, utime (14), stime (15), and more.
    (directory / "stat").write_text(f"{pid} ({name}) S " + "0 " * 10 + f"{utime} {stime} 0 0 20 0 1 0\n")
    (directory / "cmdline").write_bytes(b"\0".join(part.encode() for part in cmdline) + b"\0")


@pytest.fixture
def proc(tmp_path):
    gunicorn = ["/venv/bin/python", "/venv/bin/gunicorn", "baccarat_site.wsgi", "--bind", f"127.0.0.1:{PORT}"]
    _process(tmp_path, 100, "gunicorn", 7, 3, gunicorn)  # the master
    _process(tmp_path, 101, "gunicorn", 40, 10, gunicorn)  # a worker keeps the master's command line
    _process(tmp_path, 102, "gunicorn", 500, 500, [*gunicorn[:-1], f"127.0.0.1:{PORT}1"])  # another port
    _process(tmp_path, 103, "postgres", 20, 5, ["postgres: bench baccarat 127.0.0.1(5123) idle"])
    _process(tmp_path, 104, "a (tricky) name)", 9, 9, ["python", "--bind", f"127.0.0.1:{PORT}"])  # not gunicorn
    _process(tmp_path, os.getpid(), "python", 4, 1, [sys.executable, "manage.py", "bench_intake"])
    (tmp_path / "self").mkdir()  # not a pid
    (tmp_path / "stat").write_text("cpu  600 10 200 3000 100 5 5 50 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
    return tmp_path


def test_each_process_counts_where_it_belongs(proc):
    assert processes(PORT, str(proc)) == {"100": ("server", 10), "101": ("server", 50), "103": ("database", 25),
                                          str(os.getpid()): ("client", 5)}


def test_the_machine_is_busy_or_idle_and_stolen_time_is_neither(proc):
    # busy: user, nice, system, irq, softirq; idle: idle and I/O wait; steal (50) left out
    assert machine(str(proc)) == Counter(busy=820, idle=3100)


def test_a_process_that_ended_meanwhile_is_skipped(proc):
    (proc / "105").mkdir()  # listed, but its files are gone
    assert set(processes(PORT, str(proc))) == {"100", "101", "103", str(os.getpid())}


def test_use_between_readings_counts_new_processes_from_zero_and_leaves_ended_ones_out():
    start = {"1": ("server", 100), "2": ("database", 40), "3": ("database", 70)}
    end = {"1": ("server", 130), "2": ("database", 45), "4": ("database", 6)}  # 3 ended, 4 began
    assert used_between(start, end) == Counter(server=30, database=11)


def test_the_sampler_reads_the_parts_and_the_machine(proc):
    with CpuSampler(PORT, str(proc)) as cpu:
        _process(proc, 106, "postgres", 3, 0, ["postgres: bench baccarat 127.0.0.1(5124) idle"])
        (proc / "stat").write_text("cpu  700 10 220 3100 100 5 5 60 0 0\n")
    assert cpu.used == Counter(database=3, busy=120, idle=100)


def test_figures_per_request_leave_the_rest_to_other():
    used = Counter(server=300, database=100, client=50, busy=500, idle=100)
    figures = per_request(used, requests=100)
    assert figures == pytest.approx({"server": 3 * TICK_MS, "database": 1 * TICK_MS, "client": 0.5 * TICK_MS,
                                     "other": 0.5 * TICK_MS, "all": 5 * TICK_MS, "idle": 100 / 600})


def test_no_figures_without_requests_or_a_reading():
    assert per_request(Counter(server=3, busy=5, idle=1), requests=0) == {}
    assert per_request(Counter(), requests=10) == {}


def test_without_proc_the_sampler_reads_nothing(tmp_path):
    assert not available(str(tmp_path))
    with CpuSampler(PORT, str(tmp_path)) as cpu:
        pass
    assert cpu.used == Counter()


@pytest.mark.skipif(not available(), reason="reads Linux's /proc")
def test_the_sampler_counts_this_process_as_the_client():
    with CpuSampler(PORT) as cpu:
        started = time.process_time()
        while time.process_time() - started < 0.3:
            sum(range(1000))
    assert cpu.used["client"] * TICK_MS >= 200
    # The machine's ticks and a process's are counted apart, each rounded: they may differ by a few.
    assert cpu.used["busy"] >= 0.9 * cpu.used["client"] and cpu.used["server"] == 0
