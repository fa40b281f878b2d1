"""The settlement benchmark command: what it refuses, and one small run end to end.

The run checks that the command works and prints its figures; it asserts no speed (that is what
the command is for, on a quiet machine). It wipes the database it runs on, so it runs as a
subprocess against a throwaway database of its own, which the command creates and migrates.
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
from dbutils.postgresql import urls as database_urls
from tests import app_role

# Of their own, and changeable, so that two test runs on one machine need not share them.
BENCH_DATABASE = os.environ.get("TEST_BENCH_DATABASE", "baccarat_test_bench")  # must end in "bench"
# A Redis database of its own: the worker tests' workers listen on theirs.
BENCH_BROKER_DB = int(os.environ.get("TEST_BENCH_REDIS_DB", "13"))


def test_refuses_a_database_it_must_not_wipe(db):
    """The test database's name does not end in "bench": it asks for --force."""
    with pytest.raises(CommandError, match="does not end in 'bench'"):
        call_command("bench_settlement", "--bets", "10")


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
