"""The shortcuts benchmark (bench_shortcuts): what it refuses, and one small run end to end.

The run checks that every shortcut is measured on and off and the figures are printed; it asserts
no speed (that is what the command is for). It wipes the database it runs on, so it runs as a
subprocess against a throwaway database of its own.
"""

import os
import re
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from benchmarks.database import drop_database, server_connection
from benchmarks.shortcuts import SHORTCUTS
from dbutils.postgresql import urls as database_urls
from tests import app_role

# Of its own, and changeable, so that two test runs on one machine need not share it.
BENCH_DATABASE = os.environ.get("TEST_SHORTCUTS_BENCH_DATABASE", "baccarat_test_shortcuts_bench")


def test_refuses_a_database_it_must_not_wipe(db):
    with pytest.raises(CommandError, match="does not end in 'bench'"):
        call_command("bench_shortcuts", "--units", "1")


def test_refuses_an_unknown_setting(db):
    with pytest.raises(CommandError, match="NO_SUCH_SWITCH"):
        call_command("bench_shortcuts", "--only", "NO_SUCH_SWITCH")


def _drop(params: dict) -> None:
    with server_connection(params, autocommit=True) as maintenance:
        drop_database(maintenance, BENCH_DATABASE)


def test_small_run_measures_every_shortcut_both_ways(postgres):
    params = app_role.owner_settings()
    database_url = database_urls.to_url(params, name=BENCH_DATABASE)
    try:
        result = subprocess.run(
            [sys.executable, "manage.py", "bench_shortcuts", "--units", "20", "--slices", "1", "--bulk-size", "10"],
            cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=600,
            env={**os.environ, "DATABASE_URL": database_url, "LOG_LEVEL": "WARNING"},
        )
    finally:
        _drop(params)
    output = result.stdout
    assert result.returncode == 0, output + result.stderr
    number = r"\d+\.\d+"
    for shortcut in SHORTCUTS:
        what = re.escape(shortcut.what.format(bulk=10))
        assert re.search(rf"^{shortcut.setting} +{what}: CPU {number} ms on, {number} ms off "
                         rf"\(×{number}; web .*wall ×{number}; statements {number} on, {number} off$",
                         output, re.M), output
    # The one-statement bet is one statement; its plain path is several.
    assert re.search(r"^BET_IN_ONE_STATEMENT .*statements 1\.0 on, [2-9]\.\d off$", output, re.M), output
