"""bench_pages cannot rot: it builds a small data set on the tests' PostgreSQL server, in a database of
its own, and every page it times answers 200 through gunicorn (the command fails otherwise). Its rows
lie in the partitions of their own months, as production writes them; bench_archive then archives
and restores its past months while bets arrive, every bet answering 201.

The database: $TEST_BENCH_PAGES_DATABASE (default ``baccarat_test_pages_bench``; the name must end in
``_pages_bench``) on the tests' server, created and dropped by the command."""

import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import psycopg
import pytest

from dbutils.postgresql import urls as database_urls
from tests import app_role
from tests.conftest import service_missing

REPO_ROOT = Path(__file__).resolve().parents[2]
DATABASE = os.environ.get("TEST_BENCH_PAGES_DATABASE", "baccarat_test_pages_bench")
TIMEOUT = 240  # seconds; the run takes about 20 on this machine
SMALL = ["--bets", "2000", "--rounds", "200", "--games", "2", "--accounts", "100", "--days", "40",
         "--requests", "1", "--workers", "1"]
# A row's month by its id (dbutils.partitions: months since 2000 above bit 40) and by its time, UTC.
MONTHS_BY_ID_AND_TIME = """SELECT (id >> 40)::int, (extract(year from {at} AT TIME ZONE 'UTC')::int - 2000) * 12
                                  + extract(month from {at} AT TIME ZONE 'UTC')::int - 1, count(*)
                           FROM {table} GROUP BY 1, 2"""


@pytest.fixture
def bench_url(django_db_setup):
    assert DATABASE.endswith("_pages_bench"), "the bench database's name must end in _pages_bench"
    url = database_urls.to_url(app_role.owner_settings(), name=DATABASE)
    try:
        psycopg.connect(url, dbname="postgres", connect_timeout=5).close()
    except psycopg.OperationalError as error:
        service_missing(f"needs the tests' PostgreSQL server at {url}: {error}")
    return url


def test_every_page_answers_200_on_a_small_data_set(bench_url, tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env.update(DATABASE_URL=bench_url, LOG_LEVEL="WARNING")
    result = subprocess.run([sys.executable, "manage.py", "bench_pages", *SMALL], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=TIMEOUT)
    output = result.stdout + result.stderr
    try:
        assert result.returncode == 0, output[-6000:]
        _assert_rows_in_their_months(bench_url)
        archived = subprocess.run([sys.executable, "manage.py", "bench_archive", "--before",
                                   f"{date.today().replace(day=1):%Y-%m-%d}", "--to", str(tmp_path / "archive"),
                                   "--settle", "1"], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                                  timeout=TIMEOUT)
        assert archived.returncode == 0, (archived.stdout + archived.stderr)[-6000:]
        assert "restore from the files" in archived.stdout and "  games_auditevent: " in archived.stdout
        assert re.search(r"^  before +\d", archived.stdout, re.MULTILINE), archived.stdout
    finally:
        with psycopg.connect(bench_url, dbname="postgres", autocommit=True) as server:
            server.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith(("admin ", "api ", "dashboard "))]
    assert len(rows) > 60, result.stdout  # every admin list, the filters, the round pages, every API list
    labels = " ".join(" ".join(row) for row in rows)
    for page in ("admin games.bet list", "admin round page (settled, verified)", "api audit-head",
                 "api audit-inclusion-proof", "api audit-consistency-proof", "api round-verify"):
        assert page in labels
    assert "Not HTTP 200" not in result.stdout


def _assert_rows_in_their_months(url):
    """Bets, ledger entries and audit events over 40 days: each id carries its row's own month,
    and the rows span at least two months."""
    with psycopg.connect(url) as bench:
        for table, at in (("games_bet", "placed_at"), ("settlement_ledgerentry", "created_at"),
                          ("games_auditevent", "created_at")):
            months = bench.execute(MONTHS_BY_ID_AND_TIME.format(table=table, at=at)).fetchall()
            assert all(by_id == by_time for by_id, by_time, _count in months), (table, months)
            assert len(months) >= 2, (table, months)
