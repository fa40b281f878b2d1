"""What each shortcut around the framework gains, measured against its off-switch in one run.

Each shortcut has a setting that turns it off (the plain path, which tests hold to the same answers
and rows). This drives the real WSGI handler in this process (middleware, authentication, views,
exactly as gunicorn's worker calls it) on a database of its own, slice by slice with the shortcut
on and off in turn, so a slow spell of a noisy machine weighs on both sides alike. It reports, per
unit of work, the CPU of this process (the web worker's share), the CPU of its PostgreSQL backend
(read from /proc, Linux only), the wall time and the statements sent, and the ratio off/on.
Settlement is measured by the settlement service itself (what a Celery worker runs), on rounds
dealt beforehand with the same bets.
"""

import io
import json
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from django.test.utils import override_settings

from benchmarks.intake import data
from benchmarks.intake.run import fresh_database, refresh_statistics
from games import services as game_services
from settlement.services import settlement_run

ACTOR = "system:bench-shortcuts"


@dataclass
class Shortcut:
    setting: str
    off_value: object
    what: str            # the unit of work measured ({bulk}: bets a bulk request)
    work: str            # "single", "bulk" or "settle"
    notes: str = ""


SHORTCUTS = [
    Shortcut("BET_IN_ONE_STATEMENT", False, "a single bet", "single",
             "checks and writes in one statement (games/writes.py)"),
    Shortcut("API_PLAIN_REQUESTS", False, "a single bet", "single",
             "a plain bet around DRF's dispatch (backoffice/api/plain.py)"),
    Shortcut("API_TOKEN_CACHE_SIZE", 0, "a single bet", "single",
             "token rows kept per connection (backoffice/api/token_rows.py)"),
    Shortcut("DATABASE_QUIET_HEALTH_CHECK", False, "a single bet", "single",
             "no SELECT 1 while the socket is quiet (dbutils/postgresql/base.py)"),
    Shortcut("DATABASE_PREPARE_THRESHOLD", 0, "a single bet", "single",
             "statements prepared on the server after 5 runs"),
    Shortcut("BULK_WRITES_IN_ONE_STATEMENT", False, "a bulk request of {bulk} bets", "bulk",
             "balances, ledger entries, audit events one statement each (wallet/writes.py)"),
    Shortcut("SETTLEMENT_BETS_IN_ONE_STATEMENT", False, "a round of {bulk} bets settled in a batch", "settle",
             "a batch's bets in one UPDATE … FROM unnest (settlement/writes.py)"),
]


@dataclass
class Tally:
    units: int = 0
    process_cpu: float = 0.0
    backend_cpu: float = 0.0
    wall: float = 0.0
    statements: int = 0
    failures: list = field(default_factory=list)

    def per_unit(self, value: float) -> float:
        return value / self.units if self.units else float("nan")


def _backend_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (the PostgreSQL backend), from /proc; 0 where there is none."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Client:
    """WSGI requests to Django's handler, as gunicorn's worker makes them."""

    def __init__(self, token: str):
        self.handler = WSGIHandler()
        self.token = token

    def post(self, path: str, body: dict) -> int:
        raw = json.dumps(body).encode()
        environ = {
            "REQUEST_METHOD": "POST", "PATH_INFO": path, "QUERY_STRING": "", "SCRIPT_NAME": "",
            "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(raw)), "HTTP_HOST": "127.0.0.1",
            "HTTP_AUTHORIZATION": f"Token {self.token}", "REMOTE_ADDR": "127.0.0.1", "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "443", "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "https",
            "wsgi.input": io.BytesIO(raw), "wsgi.errors": sys.stderr, "wsgi.version": (1, 0),
            "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
        }
        status = []
        response = self.handler(environ, lambda line, headers, exc_info=None: status.append(line))
        try:
            b"".join(response)
        finally:
            response.close()  # request_finished: Django's end-of-request connection handling
        return int(status[0].split()[0])


@contextmanager
def _switched(shortcut: Shortcut, on: bool):
    if shortcut.setting == "DATABASE_PREPARE_THRESHOLD":
        # A connection option: each side gets a connection of its own, made with or without it.
        options = connection.settings_dict["OPTIONS"]
        saved = dict(options)
        if not on:
            options.pop("prepare_threshold", None)
            options.pop("server_side_binding", None)
        connection.close()
        try:
            yield
        finally:
            options.clear()
            options.update(saved)
            connection.close()
        return
    if on:
        yield
        return
    with override_settings(**{shortcut.setting: shortcut.off_value}):
        yield


class Workload:
    def __init__(self, accounts: list, game_id: int, token: str, bulk_size: int):
        self.accounts = accounts
        self.game_id = game_id
        self.client = Client(token)
        self.bulk_size = bulk_size
        self.sequence = 0
        self.round_id = game_services.round_open(game_id=game_id, actor=ACTOR).pk

    def _bet(self) -> dict:
        self.sequence += 1
        return {"account": self.accounts[self.sequence % len(self.accounts)], "bet_type": "BANKER",
                "stake": "1.00", "idempotency_key": f"shortcut-{self.sequence}"}

    def single(self) -> int:
        return self.client.post(f"/api/v1/rounds/{self.round_id}/bets/", self._bet())

    def bulk(self) -> int:
        return self.client.post(f"/api/v1/rounds/{self.round_id}/bets/bulk/",
                                {"bets": [self._bet() for _ in range(self.bulk_size)]})

    def dealt_round(self) -> int:
        """A round with ``bulk_size`` bets, dealt and waiting for settlement."""
        round_id = game_services.round_open(game_id=self.game_id, actor=ACTOR).pk
        self.round_id = round_id
        assert self.bulk() == 200
        game_services.round_deal(round_id=round_id, actor=ACTOR)
        self.round_id = game_services.round_open(game_id=self.game_id, actor=ACTOR).pk
        return round_id


def _measure(shortcut: Shortcut, on: bool, workload: Workload, units: int, tally: Tally) -> None:
    """``units`` requests, or for settlement one batch of ``units`` dealt rounds."""
    counted = []
    rounds = [workload.dealt_round() for _ in range(units)] if shortcut.work == "settle" else []

    def count(execute, sql, params, many, context):
        counted.append(1)
        return execute(sql, params, many, context)

    with _switched(shortcut, on):
        workload.single()  # warm: the connection (and, with the shortcut on, what it keeps) is made
        pid = connection.connection.info.backend_pid
        with connection.execute_wrapper(count):
            cpu, backend, wall = time.process_time(), _backend_cpu_seconds(pid), time.perf_counter()
            if rounds:
                settlement_run(round_ids=rounds, limit=len(rounds))
            for _ in range(0 if rounds else units):
                status = workload.single() if shortcut.work == "single" else workload.bulk()
                if status not in (200, 201):
                    tally.failures.append(status)
            tally.wall += time.perf_counter() - wall
            tally.process_cpu += time.process_time() - cpu
            tally.backend_cpu += _backend_cpu_seconds(pid) - backend
    tally.units += units
    tally.statements += len(counted)


def run(*, units: int, slices: int, accounts: int, bulk_size: int, only: list, say, write) -> list:
    fresh_database(say)
    # As in production with a broker: the audit sequencer runs on its own (beat), not in each request.
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    token = data.client_token()
    game = data.game()
    names = data.accounts(accounts)
    refresh_statistics()
    # Dealt rounds wait for the measured settlement: their tasks go to the in-memory broker, unread.
    from baccarat_site.celery import app
    app.conf.task_always_eager = False
    workload = Workload(names, game.pk, token, bulk_size)
    rows = []
    for shortcut in SHORTCUTS:
        if only and shortcut.setting not in only:
            continue
        on, off = Tally(), Tally()
        # Bets per slice and side: ``units`` singles, or that many in bulk requests, or five times that
        # many in one settlement batch (settlement's statements are per batch, whatever its size).
        count = {"single": units, "bulk": max(1, units // bulk_size), "settle": max(1, 5 * units // bulk_size)}[
            shortcut.work]
        for _ in range(slices):
            _measure(shortcut, True, workload, count, on)
            _measure(shortcut, False, workload, count, off)
        if on.failures or off.failures:
            raise RuntimeError(f"{shortcut.setting}: requests failed: {on.failures[:5]} {off.failures[:5]}")
        rows.append((shortcut, on, off))
        write(_line(shortcut, on, off, bulk_size))
    return rows


def _line(shortcut: Shortcut, on: Tally, off: Tally, bulk_size: int) -> str:
    def ms(tally, value):
        return 1000 * tally.per_unit(value)

    total_on = on.process_cpu + on.backend_cpu
    total_off = off.process_cpu + off.backend_cpu
    return (f"{shortcut.setting:34} {shortcut.what.format(bulk=bulk_size)}: "
            f"CPU {ms(on, total_on):.2f} ms on, {ms(off, total_off):.2f} ms off "
            f"(×{total_off / total_on:.2f}; web {ms(on, on.process_cpu):.2f}/{ms(off, off.process_cpu):.2f}, "
            f"PostgreSQL {ms(on, on.backend_cpu):.2f}/{ms(off, off.backend_cpu):.2f}); "
            f"wall ×{off.wall / on.wall:.2f}; statements {on.per_unit(on.statements):.1f} on, "
            f"{off.per_unit(off.statements):.1f} off")
