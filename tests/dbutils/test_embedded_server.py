"""The embedded PostgreSQL server: started by whatever needs it, stopped with `run`'s command, and
started again cleanly after it was killed outright."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from dbutils import embedded_server
from dbutils.postgresql import urls

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture
def data_dir():
    """A data directory outside pytest's own temporary directories, which pytest keeps to root alone
    (the server runs as another user when the tests run as root)."""
    data_dir = Path(tempfile.mkdtemp(prefix="baccarat-embedded-test-")) / "postgres"
    yield data_dir
    embedded_server.stop(data_dir)
    shutil.rmtree(data_dir.parent)


def manage(*args, data_dir: Path, **kwargs) -> subprocess.CompletedProcess:
    """A manage.py command of the checkout, DATABASE_URL unset, on ``data_dir``'s embedded server."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(EMBEDDED_POSTGRES_DIR=str(data_dir), DEBUG="1")
    return subprocess.run([sys.executable, "manage.py", *args], cwd=PROJECT, env=env, capture_output=True,
                          text=True, timeout=180, **kwargs)


def server_processes(data_dir: Path) -> list:
    """The pids of postgres processes whose command line names ``data_dir``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError, PermissionError, NotADirectoryError):
            continue
        if cmdline[0].endswith(b"postgres") and str(data_dir).encode() in cmdline:
            found.append(int(entry.name))
    return found


def test_a_command_starts_the_server_it_needs_listening_on_a_socket_only(data_dir):
    assert not embedded_server.is_running(data_dir)
    result = manage("showmigrations", "games", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    assert "[ ] 0001_initial" in result.stdout
    assert embedded_server.is_running(data_dir)
    params = urls.parse(embedded_server.database_url(data_dir, "baccarat"))
    with psycopg.connect(**urls.conninfo(params)) as connection:
        assert connection.execute("SHOW listen_addresses").fetchone() == ("",)
        assert connection.execute("SELECT current_database()").fetchone() == ("baccarat",)
    embedded_server.stop(data_dir)
    assert not embedded_server.is_running(data_dir)
    assert server_processes(data_dir) == []


def test_a_server_killed_outright_starts_again(data_dir):
    embedded_server.start(data_dir)
    pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while server_processes(data_dir) and time.monotonic() < deadline:  # its children notice and end
        time.sleep(0.1)
    assert (data_dir / "postmaster.pid").exists()  # stale
    assert not embedded_server.is_running(data_dir)
    result = manage("showmigrations", "games", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    assert embedded_server.is_running(data_dir)


def test_run_stops_the_server_when_its_command_is_stopped(data_dir):
    wrapper = subprocess.Popen(
        [sys.executable, "-m", "dbutils.embedded_server", "run", "--data-dir", str(data_dir), "--",
         sys.executable, "-c", "import os, time; print(os.environ['DATABASE_URL'], flush=True); time.sleep(120)"],
        cwd=PROJECT, stdout=subprocess.PIPE, text=True)
    url = wrapper.stdout.readline().strip()
    assert url == embedded_server.database_url(data_dir, "baccarat")
    assert embedded_server.is_running(data_dir)
    wrapper.send_signal(signal.SIGTERM)
    assert wrapper.wait(timeout=60) != 0
    assert not embedded_server.is_running(data_dir)
    assert server_processes(data_dir) == []


def test_a_temporary_server_leaves_nothing_behind():
    result = subprocess.run(
        [sys.executable, "-m", "dbutils.embedded_server", "run", "--temporary", "--",
         sys.executable, "-c", "import os; print(os.environ['DATABASE_URL'])"],
        cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    host = urls.parse(result.stdout.strip())["HOST"]
    assert not Path(host).exists()
    assert server_processes(Path(host)) == []


@pytest.mark.parametrize("host, port", [("/tmp/Some Dir/PG", ""), ("db.example.com", "6432"), ("127.0.0.1", "")])
def test_urls_carry_every_part_both_ways(host, port):
    params = {"NAME": "bac carat", "USER": "app", "PASSWORD": "p@ss:/word", "HOST": host, "PORT": port}
    parsed = urls.parse(urls.to_url(params, application_name="worker 1"))
    assert {key: str(parsed[key] or "") for key in params} == params
    assert parsed["OPTIONS"] == {"application_name": "worker 1"}
    assert parsed["ENGINE"] == "dbutils.postgresql"
