"""`make run`'s processes (baccarat_site.dev_server): the development server and Celery beat beside
it, whose periodic tasks run in-process in the embedded default (no broker), so the alert checks run
under `make run`; a SIGTERM stops both and leaves no process behind."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
from django.db import connection

from dbutils.postgresql import urls as database_urls

PROJECT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def alive(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/-/alive", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def test_serves_runs_beat_and_stops_everything_on_sigterm(postgres, tmp_path):
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": database_urls.to_url(connection.settings_dict),
           "AUDIT_SIGNING_KEY_FILE": str(tmp_path / "key.pem"), "AUDIT_HEAD_SINK_DIR": str(tmp_path / "heads")}
    env.pop("CELERY_BROKER_URL", None)
    port = free_port()
    log_path = tmp_path / "dev_server.log"
    with log_path.open("w") as log:
        process = subprocess.Popen([sys.executable, "-m", "baccarat_site.dev_server", f"127.0.0.1:{port}"],
                                   cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 90
            while not alive(f"http://127.0.0.1:{port}"):
                assert process.poll() is None and time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.3)
            children = psutil.Process(process.pid).children(recursive=True)
            commands = [" ".join(child.cmdline()) for child in children]
            assert any("celery -A baccarat_site beat" in command for command in commands), commands
            assert any("manage.py runserver" in command for command in commands), commands
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0, log_path.read_text()
    assert not [child for child in children if child.is_running() and child.status() != psutil.STATUS_ZOMBIE]


def test_a_child_deaf_to_sigterm_is_killed_so_the_command_returns(monkeypatch):
    from baccarat_site import dev_server

    monkeypatch.setattr(dev_server, "STOP_SECONDS", 1)
    deaf = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(120)"]
    short = [sys.executable, "-c", "import time; time.sleep(2)"]
    handlers = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    started = time.monotonic()
    try:
        assert dev_server.run_together(short, deaf) == 0
    finally:
        signal.signal(signal.SIGTERM, handlers[0])
        signal.signal(signal.SIGINT, handlers[1])
    assert time.monotonic() - started < 60
    assert not [process for process in psutil.process_iter(["cmdline"])
                if process.info["cmdline"] and "SIG_IGN); print('ready'" in " ".join(process.info["cmdline"])]
