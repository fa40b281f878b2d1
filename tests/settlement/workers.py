"""Real Celery worker processes for the settlement integration tests, and what the tests ask of them.

Nothing here is a mock: the workers are ``celery -A baccarat_site worker`` processes on the test
database of the real PostgreSQL and on the real Redis; the test process sends to the same Redis
through the project's own Celery app, pointed there for the test.
"""

import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager, suppress
from decimal import Decimal
from pathlib import Path

import psycopg
from django.db import connection
from django.db.models import Sum
from kombu import pools as kombu_pools

from dbutils.postgresql import urls as database_urls
from games.choices import BetStatus, RoundStatus
from games.engine import bet_return, settlement_kind
from games.models import Bet, Round
from settlement.models import SettlementBatch
from tests import app_role
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

PROJECT_DIR = Path(__file__).resolve().parents[2]
# Every worker's database session carries this prefix in its application_name, so pg_stat_activity
# shows which backend is which worker's.
APPLICATION_PREFIX = "settle-"  # + the worker name, w1, w2, ...; the test's own sessions are "test-..."
BOOT_TIMEOUT = 45
SUCCEEDED = re.compile(r"Task (settlement\.\w+)\[([0-9a-f-]+)\] succeeded in [0-9.e-]+s: (\d+)")
RETRIED = re.compile(r"Task (settlement\.\w+)\[([0-9a-f-]+)\] retry: Retry in (\d+)s")
FAILED = re.compile(r"Task (settlement\.\w+)\[([0-9a-f-]+)\] raised unexpected")


def wait_for(predicate, timeout: float, what: str, interval: float = 0.05):
    """Poll until ``predicate()`` is truthy and return it; fail the test with ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


# --- The database, seen from outside Django's connection ----------------------------------------

def conninfo(application_name: str = "", *, owner: bool = False) -> dict:
    """psycopg connection arguments for the test database (pytest-django's, e.g. test_baccarat), as
    the tests log in (the application role), or as the tables' owner."""
    settings = app_role.owner_settings() if owner else connection.settings_dict
    return database_urls.conninfo(settings, **({"application_name": application_name} if application_name else {}))


def database_url(application_name: str) -> str:
    """The worker's DATABASE_URL: the test database, its sessions named ``application_name``."""
    return database_urls.to_url(connection.settings_dict, application_name=application_name)


def query(sql: str, params=None, *, owner: bool = False) -> list:
    """One statement on a connection of its own (autocommit), so it sees what others committed."""
    with psycopg.connect(**conninfo("test-probe", owner=owner), autocommit=True) as probe:
        cursor = probe.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def lock_waiters(application_name: str | None = None) -> list:
    """[(pid, application_name, query)] of worker backends waiting for a row lock in the test database."""
    rows = query(
        """SELECT pid, application_name, query FROM pg_stat_activity
           WHERE datname = current_database() AND application_name LIKE %s AND wait_event_type = 'Lock'""",
        [APPLICATION_PREFIX + "%"],
    )
    return [row for row in rows if application_name is None or row[1] == application_name]


def backend_alive(pid: int) -> bool:
    return bool(query("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]))


def worker_backends() -> list:
    return query(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE %s",
        [APPLICATION_PREFIX + "%"],
    )


@contextmanager
def account_locked(account_id: int):
    """Hold the row lock of an account from another session (BEGIN; SELECT ... FOR UPDATE) until exit.

    Settlement takes account locks after it has claimed its rounds, so a worker that reaches this
    account waits inside ``settlement_run``, mid-batch, with its rounds claimed and nothing written.
    """
    holder = psycopg.connect(**conninfo("test-lock-holder"))
    try:
        holder.execute("SELECT id FROM settlement_account WHERE id = %s FOR UPDATE", [account_id])
        yield holder
    finally:
        holder.rollback()
        holder.close()


# --- Worker processes -----------------------------------------------------------------------------

class Worker:
    def __init__(self, index: int, log_dir: Path, broker_url: str, env: dict, queues: tuple = ()):
        self.name = f"w{index}"
        self.application_name = f"{APPLICATION_PREFIX}{self.name}"
        self.log_path = log_dir / f"{self.name}.log"
        environment = {
            **os.environ,
            "DATABASE_URL": database_url(self.application_name),
            "CELERY_BROKER_URL": broker_url,
            "SECRET_KEY": os.environ.get("SECRET_KEY") or "insecure-test-only-key",
            "DJANGO_SETTINGS_MODULE": "baccarat_site.settings",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - the worker writes to it until stop() closes it
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "baccarat_site", "worker", "--loglevel=INFO",
             "-n", f"{self.name}@%h", "--without-mingle", "--without-gossip", "--concurrency=1",
             *(["-Q", ",".join(queues)] if queues else [])],  # without -Q: every queue
            cwd=PROJECT_DIR, env=environment, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.hostname = None  # "w1@<host>", as the worker names itself (and SettlementBatch.worker)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def is_ready(self) -> bool:
        match = re.search(rf"^.*?({re.escape(self.name)}@\S+) ready\.", self.log(), re.MULTILINE)
        if match:
            self.hostname = match.group(1)
        elif self.process.poll() is not None:
            raise AssertionError(f"worker {self.name} exited with {self.process.returncode}:\n{self.log()}")
        return bool(match)

    def kill(self, sig=signal.SIGKILL) -> None:
        """Signal the worker's whole process group (the main process and its pool child)."""
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.kill(signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
        self.kill(signal.SIGKILL)  # the pool child too, whatever the main process did
        self.process.wait(timeout=10)
        self._log.close()

    def results(self) -> list:
        """[(task name, task id, returned)] of the tasks this worker finished."""
        return [(name, task_id, int(value)) for name, task_id, value in SUCCEEDED.findall(self.log())]


class Workers:
    """Starts worker processes and stops them all at teardown, whatever happened."""

    def __init__(self, log_dir: Path, broker_url: str):
        self.log_dir = log_dir
        self.broker_url = broker_url
        self.all: list[Worker] = []

    def start(self, count: int = 1, *, wait: bool = True, queues: tuple = (), **env) -> list[Worker]:
        started = [Worker(len(self.all) + i + 1, self.log_dir, self.broker_url, env, queues) for i in range(count)]
        self.all.extend(started)
        if wait:
            for worker in started:
                wait_for(worker.is_ready, BOOT_TIMEOUT, f"worker {worker.name} to be ready", interval=0.1)
        return started

    def results(self) -> list:
        return [result for worker in self.all for result in worker.results()]

    def log_lines(self, pattern: re.Pattern) -> list:
        return [match for worker in self.all for match in pattern.findall(worker.log())]

    def wait_for_results(self, count: int, timeout: float = 60) -> list:
        def finished():
            failed = self.log_lines(FAILED)
            assert not failed, f"tasks failed: {failed}\n{self.logs()}"
            results = self.results()
            return results if len(results) >= count else None

        return wait_for(finished, timeout, f"{count} tasks to succeed:\n{self.logs_tail()}", interval=0.1)

    def logs(self) -> str:
        return "\n".join(f"--- {worker.name} ---\n{worker.log()}" for worker in self.all)

    def logs_tail(self, lines: int = 15) -> str:
        return "\n".join(f"--- {worker.name} ---\n" + "\n".join(worker.log().splitlines()[-lines:])
                         for worker in self.all)

    def stop_all(self) -> None:
        for worker in self.all:
            worker.kill(signal.SIGKILL)
        for worker in self.all:
            worker.stop()
        # A killed worker's backend may still be waiting for a lock; end it before the test's flush.
        for (pid,) in worker_backends():
            query("SELECT pg_terminate_backend(%s)", [pid])
        wait_for(lambda: not worker_backends(), 10, "the workers' database sessions to end")


# --- The Celery app of this (test) process, sending to Redis ---------------------------------------

def reset_broker_pools(app) -> None:
    """Close the app's broker connection and producer pools and forget them (in the app and in
    kombu's process-wide pool registry), so the next send connects to the broker configured now."""
    amqp = app.__dict__.get("amqp")
    stale = [getattr(amqp, "_producer_pool", None) if amqp is not None else None, app._pool]
    for pool in filter(None, stale):
        pool.force_close_all()
        for group in (kombu_pools.producers, kombu_pools.connections):
            for key, value in list(group.items()):
                if value is pool:
                    dict.__delitem__(group, key)
    if amqp is not None:
        amqp._producer_pool = None
    app._pool = None


def queue_length(redis_client, queue: str = "settlement") -> int:
    return redis_client.llen(queue)


# --- What every scenario ends with ----------------------------------------------------------------

STATUS_BY_KIND = {"WIN": BetStatus.WON, "LOSE": BetStatus.LOST, "PUSH": BetStatus.PUSH}


def assert_settled_exactly_once(round_ids) -> dict:
    """From the database: each dealt bet settled once at the engine's payout, and the ledger exact.

    Returns {round id: the OK batch that settled it}.
    """
    round_ids = set(round_ids)
    assert round_ids, "the scenario dealt no rounds"
    assert not Round.objects.filter(status=RoundStatus.DEALT).exists(), "a round was left DEALT"
    assert set(Round.objects.filter(pk__in=round_ids).values_list("status", flat=True)) == {RoundStatus.SETTLED}

    bets = list(Bet.objects.filter(round_id__in=round_ids).select_related("round"))
    assert bets
    payouts = {}
    for entry in LedgerEntry.objects.filter(kind=LedgerKind.PAYOUT,
                                              bet_id__in=Bet.objects.filter(round_id__in=round_ids).values("pk")):
        assert entry.bet_id not in payouts, f"bet {entry.bet_id} was paid twice"
        payouts[entry.bet_id] = entry
    for bet in bets:
        expected = bet_return(bet.bet_type, bet.stake, bet.round.outcome, bet.multiplier)
        assert bet.payout == expected, (bet.pk, bet.payout, expected)
        assert bet.status == STATUS_BY_KIND[settlement_kind(bet.bet_type, bet.round.outcome)], bet.pk
        assert bet.settled_at is not None
        if expected:
            entry = payouts.pop(bet.pk, None)
            assert entry is not None, f"bet {bet.pk} won {expected} but has no PAYOUT entry"
            assert (entry.amount, entry.account_id) == (expected, bet.account_id)
        else:
            assert bet.pk not in payouts, f"bet {bet.pk} lost but was paid"
    assert not payouts, f"PAYOUT entries for bets that are not in the dealt rounds: {sorted(payouts)}"

    # Each round is in exactly one OK batch, and the batches' totals add up to the bets'.
    settled_by = {}
    for batch in SettlementBatch.objects.filter(outcome=SettlementBatch.Outcome.OK):
        for round_id in batch.round_ids:
            assert round_id not in settled_by, (
                f"round {round_id} settled by batches {settled_by[round_id].pk} and {batch.pk}")
            settled_by[round_id] = batch
    assert set(settled_by) == round_ids
    ok = SettlementBatch.objects.filter(outcome=SettlementBatch.Outcome.OK)
    sums = ok.aggregate(bets=Sum("bets"), staked=Sum("total_staked"), paid=Sum("total_paid"))
    assert sums["bets"] == len(bets)
    assert sums["staked"] == sum(bet.stake for bet in bets)
    assert sums["paid"] == sum(bet.payout for bet in bets)

    assert_ledger_exact()
    return settled_by


def assert_ledger_exact() -> None:
    """Every balance equals the sum of its ledger, each balance_after runs on from the entry before,
    and the balance equals what the account was given, less its stakes, plus its bets' returns."""
    for account in Account.objects.all():
        running = Decimal("0")
        for entry in account.ledger.order_by("pk"):
            running += entry.amount
            assert entry.balance_after == running, (account.external_id, entry.pk, entry.balance_after, running)
        assert account.balance == running, (account.external_id, account.balance, running)
        deposits = account.ledger.filter(kind=LedgerKind.ADJUSTMENT).aggregate(s=Sum("amount"))["s"] or 0
        bets = Bet.objects.filter(account=account).exclude(status=BetStatus.PENDING)
        staked = bets.aggregate(s=Sum("stake"))["s"] or 0
        returned = bets.aggregate(s=Sum("payout"))["s"] or 0
        pending = Bet.objects.filter(account=account, status=BetStatus.PENDING).aggregate(s=Sum("stake"))["s"] or 0
        assert account.balance == deposits - staked - pending + returned, account.external_id
