"""The PostgreSQL backend's health check (dbutils/postgresql): no query while the connection is
quiet, Django's SELECT 1 and a new connection once the server has closed it."""

import select
import time

import pytest
from django.db import DEFAULT_DB_ALIAS, connections

pytestmark = [pytest.mark.services]


@pytest.fixture
def own_connection(postgres):
    """A second connection to the test database, as the web process would hold one between requests."""
    wrapper = connections.create_connection(DEFAULT_DB_ALIAS)
    wrapper.ensure_connection()
    yield wrapper
    wrapper.close()


def checks_asked(wrapper, monkeypatch) -> list:
    asked, ask = [], wrapper.is_usable

    def is_usable():
        asked.append(True)
        return ask()

    monkeypatch.setattr(wrapper, "is_usable", is_usable)
    return asked


def request_starts(wrapper):
    """What Django does at a request's start and first query (close_old_connections, then a cursor)."""
    wrapper.close_if_unusable_or_obsolete()
    wrapper.close_if_health_check_failed()


def test_the_backend_is_ours_and_checks_health(own_connection):
    assert type(own_connection).__module__ == "dbutils.postgresql.base"
    assert own_connection.health_check_enabled and own_connection.vendor == "postgresql"


def test_a_quiet_connection_is_kept_without_a_query(own_connection, monkeypatch):
    asked = checks_asked(own_connection, monkeypatch)
    kept = own_connection.connection
    request_starts(own_connection)
    assert asked == [] and own_connection.connection is kept and own_connection.health_check_done
    with own_connection.cursor() as cursor:
        cursor.execute("SELECT 2")
        assert cursor.fetchone() == (2,)


def test_a_connection_the_server_closed_is_checked_and_replaced(own_connection, postgres, monkeypatch):
    asked = checks_asked(own_connection, monkeypatch)
    closed = own_connection.connection
    with postgres.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [closed.info.backend_pid])
        assert cursor.fetchone() == (True,)
    deadline = time.monotonic() + 5
    while not select.select([closed.fileno()], [], [], 0.05)[0]:
        assert time.monotonic() < deadline, "the server did not close the connection"
    request_starts(own_connection)
    assert asked == [True] and own_connection.connection is None
    with own_connection.cursor() as cursor:  # a new connection, no error
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != closed.info.backend_pid


def test_a_connection_inside_a_transaction_is_asked(own_connection, monkeypatch):
    own_connection.set_autocommit(False)
    with own_connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    asked = checks_asked(own_connection, monkeypatch)
    own_connection.health_check_done = False
    own_connection.close_if_health_check_failed()
    assert asked == [True]
    own_connection.rollback()
