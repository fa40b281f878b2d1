"""A small production deployment on one machine, each part its own process as if on its own host.

    python -m dbutils.cluster [--dir .data/cluster] [--primary-port 15432] [--replica-port 15433]
                              [--web-ports 18001,18002] [--web-workers 2]
                              [--workers "settlement:1 settlement:1 audit:1 webhooks:2 reports:1"]
                              [--broker redis://127.0.0.1:6379/7] [--cache redis://127.0.0.1:6379/8] [--no-fsync]

Starts, in this order: a primary PostgreSQL (the embedded binaries, data in DIR/primary, on
127.0.0.1:--primary-port); migrations as the tables' owner and ``db_roles`` for the application role
(as ``make prod-setup``); a streaming replica of the primary (``pg_basebackup -R`` over TCP into
DIR/replica, on --replica-port); one gunicorn web node per --web-ports port, each with
REPLICA_DATABASE_URL naming the replica; one Celery worker per --workers entry (``queue:processes``; a
queue named twice gets two workers, e.g. two settlement nodes of which one may die); and one beat.
It prints where each listens, writes DIR/cluster.env (the environment the nodes share, for a load
client or a management command: ``set -a; . DIR/cluster.env; set +a``), and stops everything on
Ctrl-C or SIGTERM: each process a SIGTERM (warm shutdown), then the replica and the primary.

The secret key, the API token pepper and the audit signing key are made once in DIR (only their owner
may read them); DIR/logs holds each process's output. A second start reuses the data directories.
"""

import argparse
import base64
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from dbutils import embedded_server, replica_server
from dbutils.embedded_server import SUPERUSER, _give_to, _pg, _run_as, _start, tool

PROJECT_DIR = Path(__file__).resolve().parent.parent
DATABASE = "baccarat_cluster"
APP_ROLE = "baccarat_app"
HOST = "127.0.0.1"
DEFAULT_WORKERS = "settlement:1 settlement:1 audit:1 webhooks:2 partitions:1 reports:1"
READY_TIMEOUT_SECONDS = 90
STOP_TIMEOUT_SECONDS = 30
# Durability off (fsync, synchronous commit) for a throwaway run: a killed process loses nothing
# committed, only a crash of the machine would.
_NO_FSYNC = " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"


@dataclass
class Layout:
    """Where each part of the cluster lives; every field has a command-line option."""

    base_dir: Path = PROJECT_DIR / ".data" / "cluster"
    primary_port: int = 15432
    replica_port: int = 15433
    web_ports: tuple = (18001, 18002)
    web_workers: int = 2
    workers: tuple = tuple(DEFAULT_WORKERS.split())
    broker: str = "redis://127.0.0.1:6379/7"
    cache: str = "redis://127.0.0.1:6379/8"
    fsync: bool = True
    database: str = DATABASE

    def url(self, port: int, *, user: str = SUPERUSER, password: str = "", name: str | None = None) -> str:
        credentials = quote(user) + (f":{quote(password)}" if password else "")
        return f"postgres://{credentials}@{HOST}:{port}/{quote(name or self.database)}"


@dataclass
class Process:
    name: str
    popen: subprocess.Popen
    where: str = ""
    port: int = 0  # a web node's


@dataclass
class Cluster:
    """The running cluster: its processes by name ("web1", "settlement1", "beat" …), the standby and
    the environment every node got."""

    layout: Layout
    env: dict = field(default_factory=dict)
    processes: dict = field(default_factory=dict)
    standby: "replica_server.Standby | None" = None

    @property
    def owner_url(self) -> str:
        return self.layout.url(self.layout.primary_port)

    @property
    def web_urls(self) -> list:
        return [f"http://{HOST}:{port}" for port in self.layout.web_ports]

    def kill(self, name: str) -> None:
        """SIGKILL one node (its whole process group: gunicorn's or Celery's children too), as a host
        that vanishes; "replica" kills the standby's postmaster."""
        if name == "replica":
            pid = embedded_server._postmaster_pid(self.standby.data_dir)
            if pid:
                os.kill(pid, signal.SIGKILL)
            return
        process = self.processes.pop(name)
        os.killpg(process.popen.pid, signal.SIGKILL)
        process.popen.wait()

    def stop(self) -> None:
        """Every process a SIGTERM and time to finish, then the replica and the primary (fast)."""
        for process in self.processes.values():
            _signal_group(process.popen, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        for process in self.processes.values():
            try:
                process.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process.popen, signal.SIGKILL)
                process.popen.wait()
        self.processes.clear()
        try:
            if self.standby is not None:
                replica_server.stop(self.standby.data_dir)
        finally:
            _stop_primary(self.layout.base_dir / "primary")


def _signal_group(popen: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(popen.pid, signum)


def _secret(path: Path, make) -> str:
    """The secret kept in ``path``, made by ``make()`` the first time (readable by its owner only)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(make() + "\n")
    return path.read_text().strip()


def _start_primary(layout: Layout) -> None:
    """The primary on 127.0.0.1:primary_port (initialised the first time, trusting local logins and
    replication as the embedded server's initdb does), and the cluster's database."""
    data_dir, user = (layout.base_dir / "primary").resolve(), _run_as()
    embedded_server.initialise(data_dir, user)
    if embedded_server._postmaster_pid(data_dir) is None:
        (data_dir / "postmaster.pid").unlink(missing_ok=True)
        # Not in the data directory, which pg_basebackup copies for the replica.
        sockets = embedded_server.socket_dir(layout.base_dir.resolve() / "sockets")
        sockets.mkdir(mode=0o755, exist_ok=True)
        if user:
            _give_to(sockets, user)
        options = f"-h {HOST} -k {sockets} -p {layout.primary_port}" + ("" if layout.fsync else _NO_FSYNC)
        _start(data_dir, options, user)
    _run([sys.executable, "-m", "baccarat_site.ensure_database", layout.url(layout.primary_port)], {})


def _stop_primary(data_dir: Path) -> None:
    if embedded_server.is_running(data_dir):
        _pg([tool("pg_ctl"), "-D", str(data_dir.resolve()), "-w", "-t", "60", "-m", "fast", "stop"], _run_as(),
            stdout=subprocess.DEVNULL)


def _start_replica(layout: Layout) -> "replica_server.Standby":
    data_dir = (layout.base_dir / "replica").resolve()
    if (data_dir / "PG_VERSION").exists():
        return replica_server.run(data_dir, port=layout.replica_port, throwaway=not layout.fsync)
    return replica_server.start(layout.url(layout.primary_port, name="postgres"), data_dir,
                                port=layout.replica_port, throwaway=not layout.fsync)


def _run(command: list, env: dict) -> None:
    subprocess.run(command, cwd=PROJECT_DIR, env={**os.environ, **env}, check=True, stdout=subprocess.DEVNULL)


def _app_password(layout: Layout) -> str:
    return _secret(layout.base_dir.resolve() / "app-password", lambda: secrets.token_urlsafe(24))


def node_env(layout: Layout) -> dict:
    """The environment every node gets, as ``make prod``'s PROD_ENV with the cluster's own secrets."""
    base = layout.base_dir.resolve()
    app_password = _app_password(layout)
    return {
        "DEBUG": "0",
        "DATABASE_URL": layout.url(layout.primary_port, user=APP_ROLE, password=app_password),
        "REPLICA_DATABASE_URL": layout.url(layout.replica_port, user=APP_ROLE, password=app_password),
        # Straight to the primary, whatever the launching shell says (a pooler is not part of it).
        "DATABASE_POOLER": "",
        "DATABASE_LISTEN_URL": "",
        "CELERY_BROKER_URL": layout.broker,
        "CACHE_URL": layout.cache,
        "SECRET_KEY": _secret(base / "secret-key", lambda: secrets.token_urlsafe(64)),
        "API_TOKEN_PEPPERS": _secret(base / "api-token-pepper", lambda: secrets.token_hex(32)),
        "AUDIT_SIGNING_KEY_FILE": str(base / "audit-signing-key"),
        "AUDIT_HEAD_SINK_DIR": str(base / "audit-heads"),
        "STATIC_ROOT": str(base / "static"),
        "ALLOWED_HOSTS": "localhost,127.0.0.1",
        "HTTPS_ONLY": "0",
        "METRICS_ALLOWED_IPS": "127.0.0.1,::1",
        "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
    }


def _setup(layout: Layout, env: dict, say) -> None:
    """Migrations as the owner, then the application role and the static files (``make prod-setup``)."""
    base = layout.base_dir.resolve()
    _secret(base / "audit-signing-key", lambda: base64.b64encode(secrets.token_bytes(32)).decode())
    (base / "audit-heads").mkdir(mode=0o700, exist_ok=True)
    owner = {**env, "DATABASE_URL": layout.url(layout.primary_port)}
    say(f"migrating {layout.database} as the owner, then db_roles {APP_ROLE}")
    _run([sys.executable, "manage.py", "migrate", "--noinput"], owner)
    _run([sys.executable, "manage.py", "db_roles", APP_ROLE, f"--password={_app_password(layout)}"], owner)
    _run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], env)


def _spawn(cluster: Cluster, name: str, command: list, extra_env: dict, where: str = "", port: int = 0) -> None:
    """Start one node in a session of its own (a Ctrl-C at the terminal reaches only the launcher),
    its output in DIR/logs/NAME.log and its metrics in a directory of its own, as on its own host."""
    base = cluster.layout.base_dir.resolve()
    (base / "logs").mkdir(exist_ok=True)
    metrics = base / "metrics" / name
    metrics.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **cluster.env, "PROMETHEUS_MULTIPROC_DIR": str(metrics), **extra_env}
    if os.geteuid() == 0:  # as `make prod` without PROD_USER: a JSON-only worker takes no pickle
        env["PYTHONWARNINGS"] = "ignore:You're running the worker with superuser privileges"
    with open(base / "logs" / f"{name}.log", "ab") as log:
        popen = subprocess.Popen(command, cwd=PROJECT_DIR, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    cluster.processes[name] = Process(name, popen, where, port)


def start_web(cluster: Cluster, number: int) -> None:
    port = cluster.layout.web_ports[number - 1]
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    _spawn(cluster, f"web{number}", [gunicorn, "baccarat_site.wsgi", "-c", "gunicorn.conf.py", "--bind",
                                     f"{HOST}:{port}", "--workers", str(cluster.layout.web_workers)],
           {}, f"http://{HOST}:{port}", port)


def start_workers(cluster: Cluster) -> None:
    celery = [sys.executable, "-m", "celery", "-A", "baccarat_site"]
    counted: dict = {}
    for spec in cluster.layout.workers:
        queue, _, processes = spec.partition(":")
        counted[queue] = counted.get(queue, 0) + 1
        name = f"{queue}{counted[queue]}"
        owner = {"PARTITIONS_DATABASE_URL": cluster.owner_url} if queue == "partitions" else {}  # as make prod
        _spawn(cluster, name, [*celery, "worker", "-l", "INFO", "-Q", queue, "--concurrency", processes or "1",
                               "-n", f"{name}@%h"], owner, f"queue {queue}, {processes or 1} process(es)")
    _spawn(cluster, "beat", [*celery, "beat", "-l", "INFO"], {}, "the periodic tasks")


def _wait_web(cluster: Cluster) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    for name, process in cluster.processes.items():
        port = process.port
        while port:
            if process.popen.poll() is not None:
                raise RuntimeError(f"{name} exited (see {cluster.layout.base_dir / 'logs' / name}.log)")
            try:
                socket.create_connection((HOST, port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not listen on {port} within {READY_TIMEOUT_SECONDS} s") from None
                time.sleep(0.2)


def start(layout: Layout, say=print) -> Cluster:
    """Start every part of the cluster and return it (``stop()`` ends it); on a failure, what was
    started is stopped again."""
    layout.base_dir.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(layout)
    try:
        _start_primary(layout)
        cluster.env = node_env(layout)
        _setup(layout, cluster.env, say)
        cluster.standby = _start_replica(layout)
        for number in range(1, len(layout.web_ports) + 1):
            start_web(cluster, number)
        start_workers(cluster)
        _wait_web(cluster)
    except BaseException:
        cluster.stop()
        raise
    _write_env(cluster)
    return cluster


def _write_env(cluster: Cluster) -> None:
    path = cluster.layout.base_dir.resolve() / "cluster.env"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.writelines(f"{name}='{value}'\n" for name, value in sorted(cluster.env.items()))


def describe(cluster: Cluster) -> list:
    layout = cluster.layout
    lines = [f"primary  {HOST}:{layout.primary_port}  {layout.base_dir / 'primary'}",
             f"replica  {HOST}:{layout.replica_port}  {layout.base_dir / 'replica'} (streaming from the primary)"]
    lines += [f"{name:<12} pid {process.popen.pid:<7} {process.where}" for name, process in cluster.processes.items()]
    lines.append(f"environment: {layout.base_dir / 'cluster.env'}; logs: {layout.base_dir / 'logs'}")
    return lines


def _interrupted(_signum, _frame):
    raise KeyboardInterrupt


def _ports(text: str) -> tuple:
    return tuple(int(port) for port in text.split(","))


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dbutils.cluster", description=__doc__.split("\n")[0])
    defaults = Layout()
    parser.add_argument("--dir", type=Path, default=defaults.base_dir, help="data, secrets and logs (.data/cluster)")
    parser.add_argument("--primary-port", type=int, default=defaults.primary_port)
    parser.add_argument("--replica-port", type=int, default=defaults.replica_port)
    parser.add_argument("--web-ports", type=_ports, default=defaults.web_ports, help="comma-separated, a node each")
    parser.add_argument("--web-workers", type=int, default=defaults.web_workers, help="gunicorn workers a node")
    parser.add_argument("--workers", default=DEFAULT_WORKERS, help="queue:processes, a Celery worker each")
    parser.add_argument("--broker", default=defaults.broker)
    parser.add_argument("--cache", default=defaults.cache)
    parser.add_argument("--no-fsync", action="store_true", help="a throwaway run: no fsync, no synchronous commit")
    args = parser.parse_args(argv)
    layout = Layout(base_dir=args.dir, primary_port=args.primary_port, replica_port=args.replica_port,
                    web_ports=args.web_ports, web_workers=args.web_workers, workers=tuple(args.workers.split()),
                    broker=args.broker, cache=args.cache, fsync=not args.no_fsync)
    # SIGTERM as Ctrl-C: both end the wait below, and the finally block stops every part.
    signal.signal(signal.SIGTERM, _interrupted)
    cluster = None
    try:
        cluster = start(layout)
        print("\n".join(describe(cluster)), flush=True)
        while all(process.popen.poll() is None for process in cluster.processes.values()):
            time.sleep(1)
        ended = [name for name, process in cluster.processes.items() if process.popen.poll() is not None]
        print(f"cluster: {', '.join(ended)} exited; stopping", flush=True)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if cluster is not None:
            print("cluster: stopping", flush=True)
            cluster.stop()
            print("cluster: stopped", flush=True)


if __name__ == "__main__":
    sys.exit(main())
