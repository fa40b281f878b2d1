"""A PgBouncer of one's own in transaction mode, in front of a PostgreSQL server: for the tests' pooled
pass, the intake benchmark's pooled figures and ``make cluster``.

It runs Debian's ``pgbouncer`` (``apt-get install pgbouncer``; its packaged service is not used) on a
free TCP port of 127.0.0.1 with an ini made in a temporary directory: every database of the server
(``* =``), pool mode transaction, the users given (``passwords``: PgBouncer 1.18 trusts no other)
trusted and logged in to the server with their passwords (a server that trusts them needs none).
PgBouncer refuses to run as root; under root it runs as the embedded server's system user (``-u``).

``python -m dbutils.pgbouncer DATABASE_URL [--port P]`` runs one in the foreground and prints the
pooled URL.
"""

import argparse
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dbutils import embedded_server
from dbutils.postgresql import urls as database_urls

# The first release that keeps prepared statements across a transaction pooler (max_prepared_statements).
PREPARED_STATEMENTS_FROM = (1, 21)
_START_SECONDS = 15


def binary() -> str | None:
    return shutil.which("pgbouncer") or next(
        (path for path in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.access(path, os.X_OK)), None)


def version(program: str | None = None) -> tuple[int, int]:
    """PgBouncer's (major, minor), from ``pgbouncer --version``."""
    output = subprocess.run([program or binary(), "--version"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"(\d+)\.(\d+)", output)
    if found is None:
        raise RuntimeError(f"cannot read pgbouncer's version from {output!r}")
    return int(found.group(1)), int(found.group(2))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PgBouncer:
    """``start()`` it, use ``settings(params)`` or ``url(params)`` to connect through it, ``stop()`` it."""

    def __init__(self, server: dict, *, port: int | None = None, pool_size: int = 20,
                 max_client_conn: int = 1000, passwords: dict | None = None):
        self.server = server  # Django settings dict of the server (HOST, PORT)
        self.port = port or free_port()
        self.pool_size = pool_size
        self.max_client_conn = max_client_conn
        self.passwords = {user: password or "" for user, password in (passwords or {}).items() if user}
        self.process: subprocess.Popen | None = None
        self.directory: Path | None = None

    def _ini(self, prepared: bool) -> str:
        host = self.server.get("HOST") or "127.0.0.1"
        port = self.server.get("PORT") or 5432
        lines = [
            "[databases]", f"* = host={host} port={port}", "",
            "[pgbouncer]", "listen_addr = 127.0.0.1", f"listen_port = {self.port}", "unix_socket_dir =",
            "auth_type = trust", f"auth_file = {self.directory / 'users.txt'}",
            "pool_mode = transaction", f"default_pool_size = {self.pool_size}",
            f"max_client_conn = {self.max_client_conn}",
            # psycopg sends none of these, but a libpq tool (pgbench) may.
            "ignore_startup_parameters = extra_float_digits,options",
            "server_reset_query =", "log_connections = 0", "log_disconnections = 0",
        ]
        if prepared:
            lines.append("max_prepared_statements = 200")
        return "\n".join(lines) + "\n"

    def start(self) -> "PgBouncer":
        program = binary()
        if program is None:
            raise FileNotFoundError("pgbouncer is not installed (apt-get install pgbouncer)")
        self.directory = Path(tempfile.mkdtemp(prefix="baccarat-pgbouncer-"))
        users = "".join(f'"{user}" "{password}"\n' for user, password in self.passwords.items())
        (self.directory / "users.txt").write_text(users)
        (self.directory / "pgbouncer.ini").write_text(self._ini(version(program) >= PREPARED_STATEMENTS_FROM))
        command = [program, str(self.directory / "pgbouncer.ini")]
        if os.geteuid() == 0:  # PgBouncer will not run as root
            user = embedded_server._run_as()
            entry = pwd.getpwnam(user)
            for path in (self.directory, *self.directory.iterdir()):
                os.chown(path, entry.pw_uid, entry.pw_gid)
            command[1:1] = ["-u", user]
        self._log = open(self.directory / "pgbouncer.log", "ab")  # noqa: SIM115 - closed by stop()
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + _START_SECONDS
        while True:
            if self.process.poll() is not None:
                log = (self.directory / "pgbouncer.log").read_text(errors="replace")
                self.stop()
                raise RuntimeError(f"pgbouncer exited with {self.process.returncode}: {log}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"pgbouncer did not listen on {self.port} within {_START_SECONDS}s") from None
                time.sleep(0.05)

    def settings(self, params: dict) -> dict:
        """``params`` (a Django settings dict of the server) through this PgBouncer."""
        return {**params, "HOST": "127.0.0.1", "PORT": self.port}

    def url(self, params: dict, **query) -> str:
        return database_urls.to_url(self.settings(params), **query)

    def log(self) -> str:
        return (self.directory / "pgbouncer.log").read_text(errors="replace") if self.directory else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if getattr(self, "_log", None) is not None:
            self._log.close()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description="PgBouncer in transaction mode in front of DATABASE_URL's server")
    parser.add_argument("database_url")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PGBOUNCER_PORT", "6432")))
    parser.add_argument("--pool-size", type=int, default=20)
    options = parser.parse_args(argv)
    params = database_urls.parse(options.database_url)
    bouncer = PgBouncer(params, port=options.port, pool_size=options.pool_size,
                        passwords={params.get("USER") or "": params.get("PASSWORD") or ""})
    bouncer.start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(bouncer.url(params), flush=True)
    try:
        bouncer.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        bouncer.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
