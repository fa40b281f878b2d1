"""Production commands act on production: `make prod-manage` runs a management command with the
environment `make prod` gives its processes, and both refuse, in one line and before anything else,
URLs of the application and the migrations that name different databases; no recipe prints a password."""

import subprocess
from pathlib import Path

import pytest

from baccarat_site.ensure_database import mismatch

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "app-password-never-printed"


def make(tmp_path, *args) -> subprocess.CompletedProcess:
    variables = [f"SECRET_KEY_FILE={tmp_path}/secret", f"API_TOKEN_PEPPER_FILE={tmp_path}/pepper",
                 f"PROD_DIR={tmp_path}/prod"]
    return subprocess.run(["make", "-s", "--no-print-directory", *variables, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_different_databases_are_named_without_credentials():
    problem = mismatch("postgres://postgres@db:5432/baccarat_prod", f"postgres://app:{PASSWORD}@db:5432/other")
    assert "other on db:5432" in problem and "baccarat_prod on db:5432" in problem and PASSWORD not in problem
    assert mismatch("postgres://postgres@db/prod", f"postgres://app:{PASSWORD}@db:5432/prod") is None
    assert mismatch("postgres://postgres@db:5432/prod", "postgres://app@other-host:5432/prod") is not None


@pytest.mark.parametrize("target", ["prod-manage", "prod-setup"])
def test_make_refuses_urls_of_two_databases_in_one_line(tmp_path, target):
    result = make(tmp_path, target, "ARGS=check", "MIGRATION_DATABASE_URL=postgres://postgres@127.0.0.1:5432/prod_a",
                  f"PROD_DATABASE_URL=postgres://app:{PASSWORD}@127.0.0.1:5432/prod_b")
    assert result.returncode != 0
    assert "make prod: refused: the application's database (prod_b on 127.0.0.1:5432)" in result.stderr
    assert PASSWORD not in result.stdout + result.stderr


def test_prod_manage_runs_with_productions_environment(tmp_path):
    url = f"postgres://app:{PASSWORD}@127.0.0.1:5432/baccarat_prod_elsewhere"
    code = ("from django.conf import settings as s; "
            "print(s.DATABASES['default']['NAME'], s.AUDIT_HEAD_SINK_DIR, s.AUDIT_SIGNING_KEY_FILE)")
    result = make(tmp_path, "prod-manage", f"ARGS=shell -c \"{code}\"",
                  "MIGRATION_DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_prod_elsewhere",
                  f"PROD_DATABASE_URL={url}")
    assert result.returncode == 0, result.stderr
    name, heads, key = result.stdout.splitlines()[-1].split()
    assert name == "baccarat_prod_elsewhere"
    assert heads == f"{tmp_path}/prod/audit-heads" and key == f"{tmp_path}/prod/audit-signing-key.pem"
    assert PASSWORD not in result.stdout + result.stderr
