"""A real streaming replica of the tests' server, which the tests start themselves.

Once pytest-django has made and migrated the test database (and ``db_roles`` the application role),
``dbutils.replica_server`` copies the tests' server with ``pg_basebackup -R`` into a temporary data
directory and starts it as a hot standby on a socket directory of its own and a free port
(``TEST_REPLICA_PORT`` to choose one). The alias "replica" is the application's login on the
standby's copy of the test database: a real connection to the standby, named a TEST MIRROR of
"default" only so that pytest-django neither creates a database for it nor flushes it (a standby
is read-only; the primary's flush reaches it by replication). The tests are transactional: the
standby sees committed data only.

The tests' server must be PostgreSQL of the embedded binaries' major version and let its superuser
connect for replication (the temporary embedded server does); otherwise the tests skip (fail under
REQUIRE_SERVICES=1).
"""

import contextlib
import copy
import os
import subprocess
import time

import psycopg
import pytest
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from backoffice import replica_reads
from dbutils import embedded_server, replica_server, replicas
from dbutils.postgresql import urls
from tests import app_role
from tests.conftest import service_missing

REPLICA = "replica"
REPLAY_TIMEOUT_SECONDS = 30


def _embedded_major() -> int:
    version = subprocess.run([embedded_server.tool("postgres"), "--version"], capture_output=True, text=True,
                             check=True).stdout
    return int(version.split()[-1].split(".")[0])


@pytest.fixture(scope="session")
def standby(django_db_setup, django_db_blocker):
    """The running standby (a replica_server.Standby), stopped and deleted after the session."""
    owner = app_role.owner_settings()
    with django_db_blocker.unblock(), psycopg.connect(**urls.conninfo(owner), autocommit=True) as primary:
        major = primary.execute("SHOW server_version_num").fetchone()[0]
    if int(major) // 10000 != _embedded_major():
        service_missing(f"a replica needs the tests' server to be PostgreSQL {_embedded_major()} (it is {major})")
    try:
        server = replica_server.start(urls.to_url(owner, name="postgres"),
                                      port=int(os.environ.get("TEST_REPLICA_PORT", "0")))
    except subprocess.CalledProcessError as error:
        service_missing(f"could not start a standby of the tests' server: {error}")
    yield server
    replica_server.stop(server, delete=True)


@pytest.fixture(scope="module")
def replica_alias(standby):
    """The alias "replica": the application's login on the standby's copy of the test database."""
    settings_dict = copy.deepcopy(connections[DEFAULT_DB_ALIAS].settings_dict)
    settings_dict.update(HOST=str(standby.socket_dir), PORT=str(standby.port))
    settings_dict["OPTIONS"]["connect_timeout"] = 2
    settings_dict["TEST"]["MIRROR"] = DEFAULT_DB_ALIAS
    connections.settings[REPLICA] = settings_dict
    yield REPLICA
    connections[REPLICA].close()
    del connections[REPLICA]
    del connections.settings[REPLICA]


@pytest.fixture
def standby_admin(standby):
    """A superuser connection to the standby's test database (pausing replay, reading it directly)."""
    name = connections[DEFAULT_DB_ALIAS].settings_dict["NAME"]
    with psycopg.connect(standby.url(name).replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        yield conn
        # The flush after the test must reach the standby (one the test restarted forgot the pause).
        with contextlib.suppress(psycopg.OperationalError):
            conn.execute("SELECT pg_wal_replay_resume()")


@pytest.fixture
def replica_reads_on(settings, replica_alias):
    """Reads may go to "replica"; every measurement and mark is made afresh."""
    settings.DATABASE_REPLICAS = [replica_alias]
    settings.REPLICA_LAG_CACHE_SECONDS = 0
    settings.REPLICA_RETRY_SECONDS = 0
    replicas.forget()
    replica_reads.forget_marks()
    cache.clear()  # recent-write marks of earlier tests' users, whose ids a flushed database gives again
    yield
    connections[replica_alias].close()  # before the flush
    replicas.forget()
    replica_reads.forget_marks()
    cache.clear()


def wait_replayed(standby_admin) -> None:
    """Until the standby has replayed everything the primary has committed so far. The tests' server
    commits without waiting for the WAL to reach the disk (synchronous_commit=off), and a standby is
    sent only what has: a transaction that commits synchronously flushes every commit before it."""
    with transaction.atomic(), connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SET LOCAL synchronous_commit = on")
        cursor.execute("SELECT pg_current_xact_id()")  # a transaction id: its commit is a WAL record
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()")
        target = cursor.fetchone()[0]
    deadline = time.monotonic() + REPLAY_TIMEOUT_SECONDS
    while not standby_admin.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [target]).fetchone()[0]:
        assert time.monotonic() < deadline, "the standby did not catch up"
        time.sleep(0.02)


@pytest.fixture
def paused(standby_admin):
    """pause(): the standby has replayed everything written so far, then replays nothing more."""

    def pause():
        wait_replayed(standby_admin)
        standby_admin.execute("SELECT pg_wal_replay_pause()")

    return pause
