"""PgBouncer in transaction mode (Debian's pgbouncer, dbutils.pgbouncer) in front of the test database:
what the direct settings break through it, and that DATABASE_POOLER=transaction's settings do not."""

import os
import subprocess
import sys

import psycopg
import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import DEFAULT_DB_ALIAS, connections

from dbutils import pgbouncer
from tests import app_role
from tests.conftest import service_missing
from tests.settlement.workers import PROJECT_DIR

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def bouncer(postgres):
    """A PgBouncer of one server connection in front of the test database (for the application role)."""
    if pgbouncer.binary() is None:
        service_missing("needs pgbouncer (apt-get install pgbouncer)")
    started = pgbouncer.PgBouncer(dict(postgres.settings_dict), pool_size=1,
                                  passwords={app_role.APP_ROLE: app_role.APP_PASSWORD}).start()
    yield started
    started.stop()


def pooled_settings(bouncer, postgres, **overrides) -> dict:
    params = bouncer.settings(dict(postgres.settings_dict))
    return {**params, "OPTIONS": {**params["OPTIONS"], **overrides.pop("OPTIONS", {})}, **overrides}


def test_statements_prepared_on_the_server_break_through_the_pooler(bouncer, postgres):
    """The issue's 500: two clients share a server connection, each names its first prepared statement _pg3_0."""
    url = bouncer.url(dict(postgres.settings_dict))
    with psycopg.connect(url, autocommit=True, prepare_threshold=0) as first, \
            psycopg.connect(url, autocommit=True, prepare_threshold=0) as second:
        first.execute("SELECT %s::int", [1])
        with pytest.raises(psycopg.errors.DuplicatePreparedStatement, match="_pg3_0"):
            second.execute("SELECT %s::bigint", [2])


def test_the_pooled_settings_run_through_the_pooler(bouncer, postgres):
    """No statement prepared: two connections' hot statements, run past the direct settings' prepare
    threshold on both in turn, share the one server connection."""
    settings_dict = pooled_settings(bouncer, postgres, DISABLE_SERVER_SIDE_CURSORS=True)
    settings_dict["OPTIONS"].pop("prepare_threshold", None)
    wrappers = []
    for _ in range(2):
        wrapper = connections.create_connection(DEFAULT_DB_ALIAS)
        wrapper.settings_dict = {**settings_dict, "OPTIONS": dict(settings_dict["OPTIONS"])}
        wrappers.append(wrapper)
    try:
        for n in range(10):
            for wrapper in wrappers:
                with wrapper.cursor() as cursor:
                    cursor.execute("SELECT count(*) FROM django_content_type WHERE id > %s", [n])
                    assert cursor.fetchone()[0] >= 0
        with wrappers[0].cursor() as cursor:
            cursor.execute("SELECT count(*) FROM django_content_type")
            assert cursor.fetchone()[0] == ContentType.objects.count() > 1
    finally:
        for wrapper in wrappers:
            wrapper.close()


def settings_of(**env) -> list:
    code = ("import django; django.setup(); from django.conf import settings; db = settings.DATABASES['default']; "
            "print(db['OPTIONS'].get('prepare_threshold'), db.get('DISABLE_SERVER_SIDE_CURSORS', False))")
    clean = {key: value for key, value in os.environ.items() if not key.startswith("DATABASE_")}
    result = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_DIR, capture_output=True, text=True,
                            env={**clean, "DJANGO_SETTINGS_MODULE": "baccarat_site.settings", "SECRET_KEY": "k",
                                 "DATABASE_URL": "postgres://u@h:5432/d", **env}, timeout=120)
    assert result.returncode == 0 or env.get("DATABASE_POOLER") == "statement", result.stderr
    return result.stdout.split() or [result.stderr.strip().splitlines()[-1]]


def test_database_pooler_transaction_turns_off_what_a_pooler_cannot_carry():
    assert settings_of() == ["5", "False"]
    assert settings_of(DATABASE_POOLER="transaction") == ["None", "True"]
    # PgBouncer 1.21 or later with max_prepared_statements keeps them: configured, they stay on.
    assert settings_of(DATABASE_POOLER="transaction", DATABASE_POOLER_PREPARED_STATEMENTS="1") == ["5", "True"]
    assert "DATABASE_POOLER must be" in settings_of(DATABASE_POOLER="statement")[0]
