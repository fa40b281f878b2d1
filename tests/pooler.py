"""The pooled pass: with DATABASE_POOLER=transaction the tests run through a PgBouncer of their own.

pytest-django creates and migrates the test database on the server directly; then a PgBouncer in
transaction mode (dbutils.pgbouncer: Debian's pgbouncer on a free port, its ini in a temporary
directory) is put in front of it, and the default connection, the live server and the Celery workers
the tests start (their DATABASE_URL is made from the same settings) all go through it. The token
rows' notices are heard on a direct connection (DATABASE_LISTEN_URL, the test database as the
application role), as in production behind a pooler. ``make test`` runs the modules that matter a
second time this way (POOLED_TESTS in the Makefile). Without pgbouncer the pass is skipped, unless
REQUIRE_SERVICES=1.
"""

import os

import pytest
from django.conf import settings
from django.db import connections

from dbutils import pgbouncer
from dbutils.postgresql import urls as database_urls
from tests import app_role


def start() -> "pgbouncer.PgBouncer | None":
    """Put a PgBouncer between the tests and their database, when the settings say a pooler is there."""
    if settings.DATABASE_POOLER != "transaction":
        return None
    if pgbouncer.binary() is None:
        message = "DATABASE_POOLER=transaction: the pooled pass needs pgbouncer (apt-get install pgbouncer)"
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.exit(message + " (REQUIRE_SERVICES=1)", returncode=1)
        pytest.skip(message)
    params = connections["default"].settings_dict
    owner_user, owner_password = app_role.owner_settings()["USER"], app_role.owner_settings()["PASSWORD"]
    bouncer = pgbouncer.PgBouncer(dict(params), passwords={owner_user: owner_password,
                                                          app_role.APP_ROLE: app_role.APP_PASSWORD}).start()
    direct = database_urls.to_url(params, user=app_role.APP_ROLE, password=app_role.APP_PASSWORD)
    settings.DATABASE_LISTEN_URL = os.environ["DATABASE_LISTEN_URL"] = direct
    _route(bouncer.settings(params))
    return bouncer


def stop(bouncer: "pgbouncer.PgBouncer | None") -> None:
    """Back to the server directly (the owner drops the test database there), the PgBouncer stopped,
    and the token rows' direct listeners ended (a session left on the database would keep it)."""
    if bouncer is None:
        return
    _route(bouncer.server)
    bouncer.stop()
    with app_role.as_owner() as owner, owner.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")


def _route(params: dict) -> None:
    for alias in connections:
        connections[alias].close()
    connections["default"].settings_dict.update(HOST=params["HOST"], PORT=params["PORT"])
