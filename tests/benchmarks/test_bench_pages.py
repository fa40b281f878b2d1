"""bench_pages: refuses anything but PostgreSQL, and never touches the configured database."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from benchmarks.pages.database import bench_database_name
from benchmarks.pages.report import percentile


def test_refuses_sqlite(db):
    if connection.vendor != "sqlite":
        pytest.skip("the refusal is for the embedded SQLite; on PostgreSQL the command would run for minutes")
    with pytest.raises(CommandError, match="needs PostgreSQL"):
        call_command("bench_pages", "--bets", "100", "--rounds", "50")


def test_its_own_database():
    assert bench_database_name("baccarat") == "baccarat_pages_bench"
    assert bench_database_name("baccarat_pages_bench") == "baccarat_pages_bench"


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert percentile(values, 0.5) == 50
    assert percentile(values, 0.95) == 95
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([3, 1, 2], 0.5) == 2
    with pytest.raises(ValueError):
        percentile([], 0.5)
