"""bench_sequencer: what it refuses, and one small run end to end on a database it creates and
migrates itself. It asserts no speed (that is what the command is for, on a quiet machine)."""

import os
import re
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from benchmarks.database import drop_database, server_connection
from dbutils.postgresql import urls as database_urls
from tests import app_role

# A database of its own beside the settlement bench's (TEST_BENCH_DATABASE ends in "bench").
BENCH_DATABASE = os.environ.get("TEST_BENCH_DATABASE", "baccarat_test_bench").removesuffix("bench") + "sequencer_bench"


def test_refuses_a_database_whose_log_it_must_not_grow(db):
    with pytest.raises(CommandError, match="ends in 'bench'"):
        call_command("bench_sequencer", "--events", "10")


def test_small_run_creates_its_database_and_prints_the_sequencer_beside_its_floor(postgres):
    params = app_role.owner_settings()
    with server_connection(params, autocommit=True) as maintenance:
        drop_database(maintenance, BENCH_DATABASE)  # so the command creates and migrates it
    try:
        result = subprocess.run(
            [sys.executable, "manage.py", "bench_sequencer", "--events", "3000"],
            cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=600,
            env={**os.environ, "DATABASE_URL": database_urls.to_url(params, name=BENCH_DATABASE)},
        )
    finally:
        with server_connection(params, autocommit=True) as maintenance:
            drop_database(maintenance, BENCH_DATABASE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"creating database {BENCH_DATABASE}" in result.stdout, result.stdout
    assert re.search(r"^sequencer: 3000 pending events in [\d.]+ s \([\d,]+ events/s\); floor \(read and hash them "
                     r"once\): [\d.]+ s; sequencer / floor = [\d.]+$", result.stdout, re.M), result.stdout
