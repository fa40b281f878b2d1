"""The PostgreSQL backend's health check (dbutils/postgresql): no query while the connection is
quiet, Django's SELECT 1 and a new connection once the server has closed it."""

import select
import time

import pytest

pytestmark = [pytest.mark.services]


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


def test_the_backend_is_ours_and_checks_health(second_connection):
    assert type(second_connection).__module__ == "dbutils.postgresql.base"
    assert second_connection.health_check_enabled


def test_a_quiet_connection_is_kept_without_a_query(second_connection, monkeypatch):
    asked = checks_asked(second_connection, monkeypatch)
    kept = second_connection.connection
    request_starts(second_connection)
    assert asked == [] and second_connection.connection is kept and second_connection.health_check_done
    with second_connection.cursor() as cursor:
        cursor.execute("SELECT 2")
        assert cursor.fetchone() == (2,)


def test_a_connection_the_server_closed_is_checked_and_replaced(second_connection, postgres, monkeypatch):
    asked = checks_asked(second_connection, monkeypatch)
    closed = second_connection.connection
    with postgres.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [closed.info.backend_pid])
        assert cursor.fetchone() == (True,)
    deadline = time.monotonic() + 5
    while not select.select([closed.fileno()], [], [], 0.05)[0]:
        assert time.monotonic() < deadline, "the server did not close the connection"
    request_starts(second_connection)
    assert asked == [True] and second_connection.connection is None
    with second_connection.cursor() as cursor:  # a new connection, no error
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != closed.info.backend_pid


def test_a_connection_inside_a_transaction_is_asked(second_connection, monkeypatch):
    second_connection.set_autocommit(False)
    with second_connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    asked = checks_asked(second_connection, monkeypatch)
    second_connection.health_check_done = False
    second_connection.close_if_health_check_failed()
    assert asked == [True]
    second_connection.rollback()


def test_switched_off_every_check_is_djangos_query(second_connection, settings, monkeypatch):
    settings.DATABASE_QUIET_HEALTH_CHECK = False
    asked = checks_asked(second_connection, monkeypatch)
    kept = second_connection.connection
    request_starts(second_connection)
    assert asked == [True] and second_connection.connection is kept and second_connection.health_check_done
