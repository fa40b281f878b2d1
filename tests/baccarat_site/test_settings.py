"""Settings from the environment: commands run without a secret key, the web app refuses to."""

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def run(*args, **env):
    clean = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG", "DATABASE_URL")}
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


def test_debug_gives_a_development_key_and_sqlite_by_default():
    code = ("import django; django.setup(); from django.conf import settings; "
            "print(settings.SECRET_KEY, settings.DATABASES['default']['ENGINE'], settings.CELERY_TASK_ALWAYS_EAGER)")
    result = run("-c", code, DJANGO_SETTINGS_MODULE="baccarat_site.settings", DEBUG="1")
    assert result.stdout.split() == ["insecure-development-key", "django.db.backends.sqlite3", "True"]


def test_a_broker_url_turns_off_in_process_tasks():
    code = ("import django; django.setup(); from django.conf import settings; "
            "print(settings.CELERY_TASK_ALWAYS_EAGER, settings.DATABASES['default']['ENGINE'])")
    result = run("-c", code, DJANGO_SETTINGS_MODULE="baccarat_site.settings", SECRET_KEY="k",
                 CELERY_BROKER_URL="redis://127.0.0.1:6379/0", DATABASE_URL="postgres://u@h:5432/d")
    assert result.stdout.split() == ["False", "django.db.backends.postgresql"]
