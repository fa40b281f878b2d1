"""`make run`'s processes: Django's development server and, beside it, Celery beat.

In the embedded default there is no broker and tasks run where they are sent, so beat runs each
periodic task in its own process, as a worker would: the alert checks, the audit heads, the sweeps
and the approvals' expiry run under `make run` as they do in production.

    python -m baccarat_site.dev_server HOST:PORT

Ctrl-C reaches both (they share the terminal's process group); a SIGTERM to this process is passed to
both. When either ends, the other is stopped; one that has not ended STOP_SECONDS later (a beat caught
in a periodic task or waiting for its lock) is killed, so the command always returns and the embedded
PostgreSQL server stops after it.
"""

import signal
import subprocess
import sys
import time

STOP_SECONDS = 10


def main(address: str) -> int:
    return run_together([sys.executable, "manage.py", "runserver", address],
                        [sys.executable, "-m", "celery", "-A", "baccarat_site", "beat", "--loglevel=WARNING"])


def run_together(server_command: list, *other_commands: list) -> int:
    """The server and the others until one ends or a signal comes; the server's exit status."""
    server = subprocess.Popen(server_command)
    children = (server, *(subprocess.Popen(command) for command in other_commands))

    def stop(signum, frame):
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while all(child.poll() is None for child in children):
        time.sleep(0.5)
    stop(None, None)
    deadline = time.monotonic() + STOP_SECONDS
    for child in children:
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    return server.returncode or 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1]))
