"""The many-node run under faults: a cluster (dbutils.cluster: a primary and a streaming replica, two
gunicorn web nodes, two settlement workers, an audit worker and beat, each its own process) takes bets
through both web nodes while a dealer deals rounds; mid-run one web node, one settlement worker and the
replica are killed outright (SIGKILL, as a host that vanishes). A bet whose request got no answer is
sent again with the same idempotency key, to the other node, as an integration client would.

Afterwards, once the survivors have caught up: every accepted bet exists exactly once and nothing else
does, every dealt round is settled, each settled bet has its stake and at most one return (its payout
or refund, the engine's amount), every balance equals its ledger, and audit_verify passes.

Real services: the embedded PostgreSQL binaries (pg_basebackup among them) and Redis (TEST_REDIS_URL
for the broker, TEST_CLUSTER_CACHE_URL for the cache, default the same database). TEST_CLUSTER_PORT
chooses the first of four consecutive ports (primary, replica, two web nodes); default free ones.
"""

import asyncio
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
import redis

from benchmarks.intake.client import Nodes, http_request, send
from dbutils import cluster as clusters
from dbutils import embedded_server
from dbutils.replica_server import free_port
from games.engine import bet_return
from tests.conftest import REDIS_URL, service_missing

CACHE_URL = os.environ.get("TEST_CLUSTER_CACHE_URL", REDIS_URL)
LOAD_SECONDS = 20
FAULT_AT_SECONDS = 8
CLIENTS = 8
DEAL_EVERY_SECONDS = 0.5
LIVE_ROUNDS = 4
ATTEMPTS = 40  # a request is given up (and the test fails) after this many unanswered tries
CATCH_UP_SECONDS = 90  # beat's settlement sweep runs every 30 s
ANSWERED = {200, 201, 409}


def _layout(base_dir) -> "clusters.Layout":
    first = int(os.environ.get("TEST_CLUSTER_PORT", "0"))
    ports = [first + offset for offset in range(4)] if first else [free_port() for _ in range(4)]
    return clusters.Layout(base_dir=base_dir, primary_port=ports[0], replica_port=ports[1],
                           web_ports=tuple(ports[2:]), web_workers=2,
                           workers=("settlement:1", "settlement:1", "audit:1"), broker=REDIS_URL, cache=CACHE_URL,
                           fsync=False, database="cluster_faults")


@pytest.fixture(scope="module")
def cluster():
    if shutil.which(embedded_server.tool("pg_basebackup")) is None:
        service_missing("the cluster needs the embedded PostgreSQL's pg_basebackup")
    stores = [redis.Redis.from_url(url, socket_connect_timeout=3) for url in {REDIS_URL, CACHE_URL}]
    try:
        for store in stores:
            store.flushdb()
    except redis.RedisError as error:
        service_missing(f"the cluster needs Redis at {REDIS_URL}: {error}")
    # Not under pytest's temporary directory, which a later pytest run makes private again while the
    # servers' own user still has to reach their data.
    base_dir = Path(tempfile.mkdtemp(prefix="baccarat-cluster-"))
    running = clusters.start(_layout(base_dir), say=lambda _line: None)
    yield running
    running.stop()
    shutil.rmtree(base_dir, ignore_errors=True)
    for store in stores:
        store.flushdb()


def _manage(running, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=clusters.PROJECT_DIR, capture_output=True,
                          text=True, env={**os.environ, **running.env}, timeout=120)


def _seed(running) -> dict:
    code = ("import json; from benchmarks.intake.nodes import seed; "
            "print(json.dumps(seed('faults', accounts=50, rounds=0)))")
    done = _manage(running, "shell", "-c", code)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _complete_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


class Load:
    """Bettors and a dealer through both nodes; what each request came to."""

    def __init__(self, running, made: dict):
        self.running = running
        self.nodes = Nodes(running.web_urls)
        self.auth = {"Authorization": f"Token {made['token']}", "Accept": "application/json"}
        self.accounts, self.slug = made["accounts"], made["slug"]
        self.live: list = []
        self.dealt: list = []
        self.accepted: dict = {}  # idempotency key -> bet id
        self.sent: set = set()
        self.outcomes = Counter()
        self.retried = Counter()  # status of the unanswered tries (0: no connection)
        self.given_up: list = []

    async def answered(self, raw: bytes) -> tuple[int, bytes]:
        """The first answer that is not a lost connection or a node's failure, each try on the next node.
        An answer cut short by a node's death (its JSON incomplete) counts as lost: sent again."""
        for _ in range(ATTEMPTS):
            _ms, status, body = await send(self.nodes, raw)
            if 400 <= status < 500 or (status in ANSWERED and _complete_json(body)):
                return status, body
            self.retried[status] += 1
            await asyncio.sleep(0.05)
        return -1, b""

    async def bettor(self, number: int, deadline: float) -> None:
        sequence = 0
        while time.monotonic() < deadline:
            if not self.live:
                await asyncio.sleep(0.05)
                continue
            key = f"faults-{number}-{sequence}"
            sequence += 1
            bet = {"account": random.choice(self.accounts), "bet_type": random.choice(["PLAYER", "BANKER", "TIE"]),
                   "stake": "1.00", "idempotency_key": key}
            raw = http_request("POST", f"/api/v1/rounds/{random.choice(self.live)}/bets/", self.auth,
                               json.dumps(bet).encode())
            self.sent.add(key)
            status, body = await self.answered(raw)
            self.outcomes[status] += 1
            if status in (200, 201):
                self.accepted[key] = json.loads(body)["id"]
            elif status == -1:
                self.given_up.append(key)

    async def dealer(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            status, body = await self.answered(http_request("POST", f"/api/v1/games/{self.slug}/rounds/", self.auth,
                                                            b"{}"))
            assert status == 201, (status, body)
            self.live.append(json.loads(body)["id"])
            if len(self.live) > LIVE_ROUNDS:
                round_id = self.live.pop(0)
                # Sent again after a lost answer, a deal that had happened is refused (409): dealt either way.
                status, body = await self.answered(http_request("POST", f"/api/v1/rounds/{round_id}/deal/", self.auth,
                                                                b"{}"))
                assert status in (200, 409), (status, body)
                self.dealt.append(round_id)
            await asyncio.sleep(DEAL_EVERY_SECONDS)
        for round_id in self.live:
            status, _ = await self.answered(http_request("POST", f"/api/v1/rounds/{round_id}/deal/", self.auth, b"{}"))
            assert status in (200, 409)
            self.dealt.append(round_id)

    async def faults(self, deadline: float) -> None:
        await asyncio.sleep(FAULT_AT_SECONDS)
        for name in ("web1", "settlement1", "replica"):
            self.running.kill(name)

    def run(self) -> None:
        async def main():
            deadline = time.monotonic() + LOAD_SECONDS
            await asyncio.gather(self.dealer(deadline), self.faults(deadline),
                                 *(self.bettor(number, deadline) for number in range(CLIENTS)))
        # On a thread of its own: the browser tests' Playwright leaves an event loop running on this one.
        with ThreadPoolExecutor(1) as thread:
            thread.submit(asyncio.run, main()).result()


def _query(running, sql: str, params=None) -> list:
    with psycopg.connect(running.owner_url.replace("postgres://", "postgresql://", 1), autocommit=True) as db:
        return db.execute(sql, params).fetchall()


def _wait_settled(running, round_ids: list) -> list:
    """The dealt rounds still unsettled once the survivors have had CATCH_UP_SECONDS."""
    deadline = time.monotonic() + CATCH_UP_SECONDS
    while True:
        left = _query(running, "SELECT id FROM games_round WHERE id = ANY(%s) AND status <> 'SETTLED'", [round_ids])
        if not left or time.monotonic() > deadline:
            return [row[0] for row in left]
        time.sleep(1)


def test_bench_intake_drives_both_nodes_and_one_alone(cluster):
    """Before the faults (the tests run in order): the bench's figures, not their speed."""
    urls = [argument for url in cluster.web_urls for argument in ("--url", url)]
    done = _manage(cluster, "bench_intake", *urls, "--seconds", "2", "--slices", "1", "--lag-seconds", "5",
                   "--accounts", "20", "--rounds", "5")
    assert done.returncode == 0, done.stderr
    assert re.search(r"single bets through one node .* +\d+ +[\d.]+ +[\d.]+\n", done.stdout), done.stdout
    assert re.search(r"single bets through 2 nodes, round-robin +\d+ ", done.stdout), done.stdout
    assert re.search(r"2 nodes / one node: \d+\.\d\d", done.stdout)
    assert re.search(r"settlement lag p50 [\d.]+ s, p99 [\d.]+ s", done.stdout), done.stdout
    assert "ledger equal to every balance: yes" in done.stdout


def test_killing_a_web_node_a_settlement_worker_and_the_replica_loses_no_bet_and_pays_none_twice(cluster):
    made = _seed(cluster)
    load = Load(cluster, made)
    load.run()
    print(f"faults: {len(load.accepted)} bets accepted ({load.outcomes[200]} of them answered on a retry as "
          f"placed before), {load.outcomes[409]} refused as their round was dealt, {sum(load.retried.values())} "
          f"tries unanswered {dict(load.retried)}, {len(load.dealt)} rounds dealt")
    assert not load.given_up, f"bets with no answer after {ATTEMPTS} tries: {load.given_up[:5]}"
    assert set(cluster.processes) >= {"web2", "settlement2", "beat"} and "web1" not in cluster.processes
    assert load.retried, "no request met a killed node: the faults came too late to matter"
    assert load.accepted and load.dealt

    # Every accepted bet once, with the id it was answered with; none that was not sent.
    rows = _query(cluster, """SELECT b.idempotency_key, count(*), min(b.id) FROM games_bet b
                              JOIN games_round r ON r.id = b.round_id JOIN games_gameinstance g ON g.id = r.game_id
                              WHERE g.slug = %s GROUP BY 1""", [made["slug"]])
    stored = {key: (count, bet_id) for key, count, bet_id in rows}
    expected = {key: (1, bet_id) for key, bet_id in load.accepted.items()}
    assert {key: stored.get(key) for key in load.accepted} == expected
    assert set(stored) <= load.sent

    assert _wait_settled(cluster, load.dealt) == [], "dealt rounds left unsettled by the surviving worker"
    bets = _query(cluster, """
        SELECT b.id, b.bet_type, b.stake, b.multiplier, b.payout, b.status, r.outcome,
               (SELECT count(*) FROM settlement_ledgerentry e WHERE e.bet_id = b.id AND e.kind = 'STAKE'),
               (SELECT coalesce(array_agg(e.amount), '{}') FROM settlement_ledgerentry e
                 WHERE e.bet_id = b.id AND e.kind IN ('PAYOUT', 'REFUND'))
        FROM games_bet b JOIN games_round r ON r.id = b.round_id WHERE r.id = ANY(%s)""", [load.dealt])
    assert {bet[0] for bet in bets} >= set(load.accepted.values())
    wrong = [bet for bet in bets
             if bet[5] == "PENDING" or bet[7] != 1
             or bet[4] != bet_return(bet[1], bet[2], bet[6], bet[3])
             or bet[8] != ([bet[4]] if bet[4] else [])]
    assert not wrong, f"bets not settled exactly once at the engine's amount: {wrong[:5]}"
    unequal = _query(cluster, """
        SELECT a.external_id, a.balance, coalesce(sum(e.amount), 0) FROM settlement_account a
        LEFT JOIN settlement_ledgerentry e ON e.account_id = a.id GROUP BY a.id
        HAVING a.balance <> coalesce(sum(e.amount), 0)""")
    assert unequal == []

    verified = _manage(cluster, "audit_verify")
    assert verified.returncode == 0 and verified.stdout.startswith("OK:"), verified.stdout + verified.stderr
