"""A hot-standby replica of a PostgreSQL 18 server, made and run with the embedded binaries.

``pg_basebackup -R`` copies the primary (any server of the same major version that allows a
replication connection: the embedded one does, its initdb trusts ``local replication``) into a new
data directory with the standby's settings written, and ``pg_ctl`` starts it on a socket directory
of its own and a free TCP port of 127.0.0.1. The tests start one this way (tests/replicas/); a
cluster run can start several:

    standby = replica_server.start(primary_url)     # a Standby: url(name), port, data_dir
    ...
    replica_server.stop(standby, delete=True)

    python -m dbutils.replica_server start PRIMARY_URL [--data-dir DIR] [--port N]  # prints the standby's URL
    python -m dbutils.replica_server stop DATA_DIR

Under root the standby runs as the embedded server's system user, as the primary does
(dbutils.embedded_server). Standard library only, like that module.
"""

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from dbutils import embedded_server
from dbutils.embedded_server import SUPERUSER, _give_to, _pg, _run_as, _start, tool


@dataclass(frozen=True)
class Standby:
    data_dir: Path
    socket_dir: Path
    port: int

    def url(self, name: str, user: str = SUPERUSER) -> str:
        """The URL of database ``name`` on the standby, over its Unix socket."""
        return f"postgres://{quote(user)}@/{quote(name)}?host={quote(str(self.socket_dir), safe='/')}&port={self.port}"

    def tcp_url(self, name: str, user: str = SUPERUSER) -> str:
        return f"postgres://{quote(user)}@127.0.0.1:{self.port}/{quote(name)}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _primary_args(primary_url: str) -> list:
    """pg_basebackup's connection options for a postgres:// URL (a socket host in its query)."""
    parts = urlsplit(primary_url)
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    host = query.get("host") or parts.hostname or ""
    port = query.get("port") or parts.port or ""
    args = ["-U", unquote(parts.username or SUPERUSER)]
    return [*args, *(["-h", host] if host else []), *(["-p", str(port)] if port else [])]


def start(primary_url: str, data_dir: Path | None = None, *, port: int = 0, throwaway: bool = True) -> Standby:
    """Copy the primary into ``data_dir`` (new; default a temporary directory) as a standby and start
    it on ``port`` (0: a free one). ``throwaway`` runs it without fsync, as the test server runs."""
    data_dir = Path(data_dir or Path(tempfile.mkdtemp(prefix="baccarat-replica-")) / "data").resolve()
    user = _run_as()
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=False)
    if user:
        _give_to(data_dir, user)
    _pg([tool("pg_basebackup"), *_primary_args(primary_url), "-D", str(data_dir), "-R", "-X", "stream",
         "-c", "fast", "--no-sync"], user, stdout=subprocess.DEVNULL)
    return run(data_dir, port=port, throwaway=throwaway)


def run(data_dir: Path, *, port: int = 0, throwaway: bool = True) -> Standby:
    """Start the standby of ``data_dir`` (made by ``start``) again, after ``stop``."""
    data_dir, user = Path(data_dir).resolve(), _run_as()
    port = port or free_port()
    sockets = embedded_server.socket_dir(data_dir)
    sockets.mkdir(mode=0o755, exist_ok=True)
    if user:
        _give_to(sockets, user)
    (data_dir / "postmaster.pid").unlink(missing_ok=True)
    options = f"-h 127.0.0.1 -k {sockets} -p {port} -c hot_standby=on"
    if throwaway:
        options += " -c fsync=off -c synchronous_commit=off"
    _start(data_dir, options, user)
    return Standby(data_dir=data_dir, socket_dir=sockets, port=port)


def stop(standby: Standby | Path, *, delete: bool = False) -> None:
    """Stop the standby (fast); ``delete`` removes its data directory (and the temporary one above it)."""
    data_dir = Path(getattr(standby, "data_dir", standby)).resolve()
    if embedded_server.is_running(data_dir):
        _pg([tool("pg_ctl"), "-D", str(data_dir), "-w", "-t", "60", "-m", "fast", "stop"], _run_as(),
            stdout=subprocess.DEVNULL)
    if delete:
        shutil.rmtree(embedded_server.socket_dir(data_dir), ignore_errors=True)
        shutil.rmtree(data_dir.parent if data_dir.parent.name.startswith("baccarat-replica-") else data_dir,
                      ignore_errors=True)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dbutils.replica_server", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="action", required=True)
    starting = commands.add_parser("start")
    starting.add_argument("primary_url")
    starting.add_argument("--data-dir", type=Path, default=None)
    starting.add_argument("--port", type=int, default=0)
    starting.add_argument("--database", default="postgres")
    stopping = commands.add_parser("stop")
    stopping.add_argument("data_dir", type=Path)
    stopping.add_argument("--delete", action="store_true")
    args = parser.parse_args(argv)
    if args.action == "start":
        standby = start(args.primary_url, args.data_dir, port=args.port, throwaway=False)
        print(standby.url(args.database))
    else:
        stop(args.data_dir, delete=args.delete)
    return 0


if __name__ == "__main__":
    sys.exit(main())
