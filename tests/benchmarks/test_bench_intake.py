"""bench_intake: what it refuses, and one short run end to end through gunicorn and a worker.

The run checks that the command works and prints every figure beside its floor; it asserts no
speed (that is what the command is for, on a quiet machine).
"""

import os
import re
import subprocess
import sys

import pytest
import redis
from django.conf import settings
from django.core.management import CommandError, call_command

from benchmarks.database import drop_database, server_connection
from benchmarks.intake.client import Nodes, Phase, address, http_request
from benchmarks.intake.report import turn_ratios
from dbutils.postgresql import urls as database_urls
from tests import app_role

# A database of its own beside the settlement bench's (TEST_BENCH_DATABASE ends in "bench").
BENCH_DATABASE = os.environ.get("TEST_BENCH_DATABASE", "baccarat_test_bench").removesuffix("bench") + "intake_bench"
BENCH_BROKER_DB = int(os.environ.get("TEST_BENCH_REDIS_DB", "13"))


def test_refuses_a_database_it_must_not_drop(db):
    with pytest.raises(CommandError, match="does not end in 'bench'"):
        call_command("bench_intake", "--seconds", "1")


def test_refuses_one_url_alone(db):
    with pytest.raises(CommandError, match="two web nodes or more"):
        call_command("bench_intake", "--url", "http://127.0.0.1:8001")


def test_nodes_are_taken_in_turn():
    nodes = Nodes(["http://127.0.0.1:8001", "http://localhost:8002/"])
    assert [address(nodes) for _ in range(4)] == [("127.0.0.1", 8001), ("localhost", 8002)] * 2
    assert address(8000) == ("127.0.0.1", 8000)


def test_requests_are_plain_http_1_1_with_a_body_length():
    raw = http_request("POST", "/api/v1/rounds/1/bets/", {"Authorization": "Token t"}, b'{"a": 1}')
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"POST /api/v1/rounds/1/bets/ HTTP/1.1\r\n")
    assert b"Content-Length: 8" in head and b"Connection: close" in head and body == b'{"a": 1}'


def test_a_phase_counts_only_the_expected_statuses():
    phase = Phase(seconds=2.0)
    for status in (201, 201, 409, 500):
        phase.add(10.0, status, {201})
    assert phase.per_second == 1.0 and phase.unexpected == {409: 1, 500: 1}


def test_slices_of_a_phase_join_into_one():
    first, second = Phase(seconds=2.0), Phase(seconds=3.0)
    for status in (201, 201, 409):
        first.add(10.0, status, {201})
    for status in (201, 500, 409):
        second.add(20.0, status, {201})
    first.client_cpu_seconds, second.client_cpu_seconds = 0.5, 1.0
    joined = first.joined(second)
    assert (joined.seconds, joined.latencies, joined.unexpected, joined.client_cpu_seconds) == (
        5.0, [10.0, 10.0, 20.0], {409: 2, 500: 1}, 1.5)
    assert joined.per_second == 0.6


def test_turn_ratios_pair_each_turns_own_slices():
    turns = [{"floor": 2000.0, "single": 500.0}, {"floor": 1600.0, "single": 480.0}, {"floor": 1800.0}]
    assert turn_ratios(turns, "single", "floor") == [0.25, 0.3]


@pytest.mark.services
def test_small_run_prints_every_figure_beside_its_floor(postgres, redis_url):
    params = app_role.owner_settings()  # the benchmark creates, migrates and drops its own database
    database_url = database_urls.to_url(params, name=BENCH_DATABASE)
    broker = f"{redis_url.rsplit('/', 1)[0]}/{BENCH_BROKER_DB}"
    try:
        result = subprocess.run(
            [sys.executable, "manage.py", "bench_intake", "--seconds", "2", "--lag-seconds", "3", "--clients", "4",
             "--rounds", "10", "--accounts", "50", "--bulk-size", "20", "--workers", "2", "--broker", broker,
             "--cache", broker, "--prefill", "1000"],
            cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=600,
            env={**os.environ, "DATABASE_URL": database_url},
        )
    finally:
        with server_connection(params, autocommit=True) as maintenance:
            drop_database(maintenance, BENCH_DATABASE)
        redis.Redis.from_url(broker).flushdb()
    output = result.stdout
    assert result.returncode == 0, output + result.stderr
    # Its gunicorn serves collected static files and its worker runs as it would under make prod-worker:
    # neither warns (of a missing static directory, of root).
    assert "Warning" not in result.stderr, result.stderr
    for label in ("framework floor", "authenticated read", "single bets over 10 rounds", "single bets on one round",
                  "bulk bets, 20 a request", "SQL floor"):
        assert re.search(rf"^{re.escape(label)}.*\s[\d.]+\s*$|^{re.escape(label)}.*transactions/s", output, re.M), \
            (label, output)
    for ratio in ("single bets / framework floor", "one round / many rounds", "bulk bets / SQL floor",
                  "single-bet p99", "settlement lag p99"):
        assert re.search(rf"^\s+{re.escape(ratio)}.*\s[\d.]+\s+target .* (met|MISSED)$", output, re.M), (ratio, output)
    assert re.search(r"^  single / floor turn by turn: [\d.]+ [\d.]+ [\d.]+ \(spread [\d.]+ to [\d.]+\)$", output,
                     re.M), output
    assert "a round with 1,000 bets: deal request" in output
    # --prefill: single / floor on the empty tables, then on the history, in the same run.
    assert "prefilled 1,000 bets and 2,000 ledger entries" in output + result.stderr, output + result.stderr
    assert re.search(r"^  single / floor on the empty tables, turn by turn: [\d.]+ [\d.]+ [\d.]+ \(median [\d.]+; "
                     r"with the history [\d.]+\)$", output, re.M), output
    assert re.search(r"^\s+single / floor, history / empty tables\s+[\d.]+\s+target ≥ 0.9\s+(met|MISSED)$", output,
                     re.M), output
    # The metrics' cost: the same single bets on two more gunicorns, metrics on and off, in the same run.
    for setting in ("on", "off"):
        assert re.search(rf"^single bets, the same, metrics {setting} \(own server\)\s+[\d.]+\s+[\d.]+\s", output,
                         re.M), output
    assert re.search(r"^\s+metrics' cost on single bets \(%\)\s+-?[\d.]+\s+target < 3\s+(met|MISSED)$", output,
                     re.M), output
    assert re.search(r"^  the metrics cost a single bet [-+][\d.]+ ms of gunicorn's CPU", output, re.M), output
    # The CPU split: gunicorn served the bets, PostgreSQL wrote them.
    single = re.search(r"^  single bets over 10 rounds\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+\d+ %$",
                       output, re.M)
    assert single, output
    server, database, _client, _other, every = map(float, single.groups())
    assert server > 0 and database > 0 and every >= server + database
    assert re.search(r"^  a single bet costs [\d.]+ times a 404's CPU in all", output, re.M), output
    assert "exactly once: ledger equals balances for every account" in output
