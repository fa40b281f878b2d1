"""The settlement benchmark command: what it refuses, one small run end to end, and its check.

The run checks that the command works and prints its figures; it asserts no speed (that is what
the command is for, on a quiet machine). It wipes the database it runs on, so it runs as a
subprocess against a throwaway database of its own, which the command creates and migrates. The
check is shown to find a wrong payout of a side bet on the benchmark's data, settled in process.
"""

import os
import re
import subprocess
import sys

import pytest
import redis
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from benchmarks.database import drop_database, server_connection
from benchmarks.settlement import data
from benchmarks.settlement.check import verify
from dbutils.postgresql import urls as database_urls
from games.engine import BET_TYPES
from settlement.services import settlement_sweep
from tests import app_role

# Of their own, and changeable, so that two test runs on one machine need not share them.
BENCH_DATABASE = os.environ.get("TEST_BENCH_DATABASE", "baccarat_test_bench")  # must end in "bench"
# A Redis database of its own: the worker tests' workers listen on theirs.
BENCH_BROKER_DB = int(os.environ.get("TEST_BENCH_REDIS_DB", "13"))


def test_refuses_a_database_it_must_not_wipe(db):
    """The test database's name does not end in "bench": it asks for --force."""
    with pytest.raises(CommandError, match="does not end in 'bench'"):
        call_command("bench_settlement", "--bets", "10")


@pytest.mark.parametrize("share", ["-0.1", "1.5"])
def test_refuses_a_side_bet_share_out_of_range(share):
    with pytest.raises(CommandError, match="--side-bets is a share"):
        call_command("bench_settlement", "--side-bets", share)


def _drop(params: dict) -> None:
    with server_connection(params, autocommit=True) as maintenance:
        drop_database(maintenance, BENCH_DATABASE)


@pytest.mark.services
def test_small_run_prints_every_figure_and_exactly_once_ok(postgres, redis_url):
    params = app_role.owner_settings()  # the benchmark creates, migrates and drops its own database
    database_url = database_urls.to_url(params, name=BENCH_DATABASE)
    broker = f"{redis_url.rsplit('/', 1)[0]}/{BENCH_BROKER_DB}"
    _drop(params)  # so the command creates and migrates it
    try:
        result = subprocess.run(
            [sys.executable, "manage.py", "bench_settlement", "--bets", "2000", "--bets-per-round", "20",
             "--accounts", "50", "--naive-sample", "200", "--memory-sizes", "500,2000", "--broker", broker],
            cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=600,
            env={**os.environ, "DATABASE_URL": database_url},
        )
    finally:
        _drop(params)
        redis.Redis.from_url(broker).flushdb()
    output = result.stdout
    assert result.returncode == 0, output + result.stderr
    assert f"creating database {BENCH_DATABASE}" in output
    side_bets = re.search(r"data set: 2000 bets \((\d+) side bets\)", output)
    assert side_bets and int(side_bets[1]) > 0, output  # the default mix has side bets
    number = r"[\d,]+(?:\.\d+)?"
    row = rf"\s+{number}\s+{number}\s+(?:{number}|-)"  # seconds, bets/s, bets per CPU second
    assert re.search(rf"\(a\) floor: one SQL statement\s+2000{row}", output), output
    assert re.search(rf"\(b\) naive ORM loop\s+200{row}\s+measured on a sample of 200 bets", output), output
    assert re.search(rf"\(c\) worker path \(1 worker, Celery\)\s+2000{row}", output), output
    assert re.search(rf"worker / floor: {number}", output), output
    assert re.search(rf"worker / naive: {number}x", output), output
    for size in (500, 2000):
        assert re.search(rf"{size} bets: peak {number} MB \(idle {number} MB", output), output
    assert "floor check: OK; naive check: OK" in output
    assert "exactly once: OK" in output


@pytest.mark.services
def test_small_run_beside_history_undoes_each_settlement_in_place(postgres, redis_url):
    """--prefill: the history is written once and kept; before each measurement the last one's
    settlement of the data set is undone in place (its rows equal to the build's, or the run stops);
    the checks count the data set's rows alone, and no copy of the database is made."""
    params = app_role.owner_settings()
    database_url = database_urls.to_url(params, name=BENCH_DATABASE)
    broker = f"{redis_url.rsplit('/', 1)[0]}/{BENCH_BROKER_DB}"
    _drop(params)
    try:
        result = subprocess.run(
            [sys.executable, "manage.py", "bench_settlement", "--bets", "1000", "--bets-per-round", "20",
             "--accounts", "30", "--naive-sample", "100", "--memory-sizes", "500,1000", "--prefill", "3000",
             "--broker", broker],
            cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=600,
            env={**os.environ, "DATABASE_URL": database_url},
        )
        with server_connection(params, autocommit=True) as maintenance:
            databases = {name for (name,) in maintenance.execute("SELECT datname FROM pg_database")}
    finally:
        _drop(params)
        redis.Redis.from_url(broker).flushdb()
    output = result.stdout
    assert result.returncode == 0, output + result.stderr
    assert "prefilled 3,000 bets and 6,000 ledger entries" in output, output
    assert output.count("; check: OK") == 4, output  # floor, naive, worker at 1,000 bets and at 500
    assert "(measured beside 3,000 settled bets of history, as the database holds them)" in output, output
    assert "exactly once: OK" in output
    assert not {name for name in databases if name.startswith(BENCH_DATABASE) and name != BENCH_DATABASE}


# Wrong settlements of one side bet, each as a settlement with a bug would write it: (what, the
# UPDATE of the first side bet it applies to, which the data set holds).
WRONG_SIDE_BETS = [
    ("paid a cent more", f"""
        UPDATE {data.T_BET} SET payout = payout + 0.01
        WHERE id = (SELECT min(id) FROM {data.T_BET} WHERE paytable IS NOT NULL AND status = 'WON')"""),
    ("paid at its highest multiplier, not its event's", f"""
        UPDATE {data.T_BET} SET payout = trunc(stake * multiplier, 2)
        WHERE id = (SELECT min(id) FROM {data.T_BET} WHERE paytable IS NOT NULL AND status = 'WON'
                    AND payout <> trunc(stake * multiplier, 2))"""),
    ("a push kept as lost", f"""
        UPDATE {data.T_BET} SET status = 'LOST', payout = 0
        WHERE id = (SELECT min(id) FROM {data.T_BET} WHERE paytable IS NOT NULL AND status = 'PUSH')"""),
    ("a loss paid at its highest multiplier", f"""
        UPDATE {data.T_BET} SET status = 'WON', payout = trunc(stake * multiplier, 2)
        WHERE id = (SELECT min(id) FROM {data.T_BET} WHERE paytable IS NOT NULL AND status = 'LOST')"""),
]


@pytest.mark.owner  # the data builder truncates the tables and makes the events table, as the tables' owner
def test_the_check_finds_a_wrong_side_bet_settlement(postgres, events_table):
    """On the benchmark's data, half of it side bets, settled by the product's sweep in this
    process: the check passes; then it finds each wrong settlement of a single side bet."""
    shape = data.Shape(bets_per_round=20, accounts=30, seed=7, client_id=data.bench_client(), side_bets=0.5)
    dataset = data.build(2000, shape, say=lambda text: None)
    assert dataset.side_bets > 0
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT bet_type FROM {data.T_BET}")
        assert {bet_type for (bet_type,) in cursor.fetchall()} == set(BET_TYPES)
    settlement_sweep()
    assert verify(expect_all=True, data=dataset) == []
    for what, wrong in WRONG_SIDE_BETS:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(wrong)
            assert cursor.rowcount == 1, what
            problems = verify(expect_all=True, data=dataset)
            transaction.set_rollback(True)
        assert "1 settled bets with a wrong status or payout" in problems, (what, problems)
