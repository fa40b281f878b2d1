"""Settings from the environment: commands run without a secret key, the web app refuses to."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dbutils import embedded_server

PROJECT = Path(__file__).resolve().parents[2]


def run(*args, **env):
    unset = ("SECRET_KEY", "DEBUG", "DATABASE_URL", "DATABASE_PREPARE_THRESHOLD")
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run([sys.executable, *args], cwd=PROJECT, env={**clean, **env},
                          capture_output=True, text=True, timeout=120)


def test_player_commands_need_no_secret_key():
    result = run("manage.py", "verify_round", "--server-seed", "0" * 64, "--client-seed", "client",
                 "--nonce", "0", "--decks", "1")
    assert result.returncode == 0, result.stderr
    assert '"outcome": "TIE"' in result.stdout


def test_signing_without_a_secret_key_fails_loudly():
    code = "import django; django.setup(); from django.core import signing; signing.dumps(1)"
    result = run("-c", code, DJANGO_SETTINGS_MODULE="baccarat_site.settings")
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_debug_gives_a_development_key_and_the_embedded_postgresql_by_default():
    code = ("import django; django.setup(); from django.conf import settings; db = settings.DATABASES['default']; "
            "print(settings.SECRET_KEY, db['ENGINE'], db['HOST'], db['NAME'], db['EMBEDDED_DATA_DIR'], "
            "settings.CELERY_TASK_ALWAYS_EAGER)")
    result = run("-c", code, DJANGO_SETTINGS_MODULE="baccarat_site.settings", DEBUG="1")
    data_dir = PROJECT / ".data" / "postgres"
    assert result.stdout.split() == ["insecure-development-key", "dbutils.postgresql",
                                     str(embedded_server.socket_dir(data_dir)), "baccarat", str(data_dir), "True"]


def test_a_database_url_of_another_kind_is_refused():
    result = run("manage.py", "check", DEBUG="1", DATABASE_URL="sqlite:///db.sqlite3")
    assert result.returncode != 0
    assert "DATABASE_URL must name a PostgreSQL database" in result.stderr


def test_a_broker_url_turns_off_in_process_tasks():
    code = ("import django; django.setup(); from django.conf import settings; "
            "print(settings.CELERY_TASK_ALWAYS_EAGER, settings.DATABASES['default']['ENGINE'])")
    result = run("-c", code, DJANGO_SETTINGS_MODULE="baccarat_site.settings", SECRET_KEY="k",
                 CELERY_BROKER_URL="redis://127.0.0.1:6379/0", DATABASE_URL="postgres://u@h:5432/d")
    assert result.stdout.split() == ["False", "dbutils.postgresql"]


PRODUCTION = {"SECRET_KEY": "k" * 20 + "-production-only-0123456789-abcdefghijklmnop",
              "ALLOWED_HOSTS": "bo.example.com"}


def test_check_deploy_is_clean_with_the_production_defaults():
    # Test runners set DJANGO_ALLOW_ASYNC_UNSAFE (Playwright's plugin); a deployment never does.
    clean = {k: v for k, v in os.environ.items() if k not in ("HTTPS_ONLY", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                            cwd=PROJECT, env={**{k: v for k, v in clean.items() if k not in ("DEBUG", "SECRET_KEY")},
                                              **PRODUCTION},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_defaults_are_https_only_and_development_serves_plain_http():
    code = ("import django; django.setup(); from django.conf import settings as s; "
            "print(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS > 0)")
    clean = {k: v for k, v in os.environ.items() if k not in ("HTTPS_ONLY", "DEBUG", "SECRET_KEY")}

    def settings_with(**env):
        return subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, timeout=120,
                              env={**clean, "DJANGO_SETTINGS_MODULE": "baccarat_site.settings", **env}).stdout.split()

    assert settings_with(**PRODUCTION) == ["True"] * 4
    assert settings_with(DEBUG="1") == ["False"] * 4
    assert settings_with(HTTPS_ONLY="0", **PRODUCTION) == ["False"] * 4


def test_the_web_server_refuses_to_start_without_a_secret_key():
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    clean = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    result = subprocess.run([gunicorn, "baccarat_site.wsgi", "--bind", "127.0.0.1:8201", "--workers", "1"],
                            cwd=PROJECT, env=clean, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "The SECRET_KEY setting must not be empty" in result.stderr
    started = run("-c", "import baccarat_site.wsgi",
                  DJANGO_SETTINGS_MODULE="baccarat_site.settings", **PRODUCTION)
    assert started.returncode == 0, started.stderr


def test_the_web_application_s_loaded_objects_are_kept_out_of_the_collector_s_passes():
    frozen = run("-c", "import gc, baccarat_site.wsgi; print(gc.get_freeze_count())",
                 DJANGO_SETTINGS_MODULE="baccarat_site.settings", **PRODUCTION)
    assert frozen.returncode == 0, frozen.stderr
    assert int(frozen.stdout.split()[-1]) > 10_000  # Django, DRF and the apps, loaded before the first request


def test_make_prod_uses_a_random_key_made_once_and_readable_by_its_owner_only(tmp_path):
    def make_key(name):
        path = tmp_path / name
        for _ in range(2):
            subprocess.run(["make", "-s", "secret-key", f"SECRET_KEY_FILE={path}", f"PYTHON={sys.executable}"],
                           cwd=PROJECT, check=True, capture_output=True, timeout=60)
        return path

    first, second = make_key("one"), make_key("two")
    assert first.stat().st_mode & 0o077 == 0
    key = first.read_text().strip()
    assert len(key) >= 64 and key != second.read_text().strip()
    dry_run = subprocess.run(["make", "-n", "prod-web", f"SECRET_KEY_FILE={first}"], cwd=PROJECT,
                             capture_output=True, text=True, timeout=60).stdout
    assert f"cat {first}" in dry_run and "hostname" not in dry_run


@pytest.mark.parametrize(("threshold", "options"), [(None, "True 5"), ("0", "None None"), ("3", "True 3")])
def test_postgresql_statements_are_bound_on_the_server_and_prepared_unless_turned_off(threshold, options):
    code = ("import django; django.setup(); from django.conf import settings; o = settings.DATABASES['default']"
            "['OPTIONS']; print(o.get('server_side_binding'), o.get('prepare_threshold'))")
    env = {"DATABASE_PREPARE_THRESHOLD": threshold} if threshold else {}
    result = run("-c", code, DJANGO_SETTINGS_MODULE="baccarat_site.settings", SECRET_KEY="k",
                 DATABASE_URL="postgres://u@h:5432/d", **env)
    assert result.stdout.split() == options.split(), result.stderr
