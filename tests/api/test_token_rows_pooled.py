"""Token rows behind a pooler in transaction mode (DATABASE_POOLER=transaction): the change notices are
heard on a direct connection of the thread's own (DATABASE_LISTEN_URL), never through the pooled
connection; without that URL nothing is kept."""

import select
import time

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from backoffice.api import token_rows
from backoffice.roles import Role
from dbutils.postgresql import urls as database_urls
from dbutils.replica_server import free_port
from tests.api.helpers import API
from tests.conftest import make_user

NOTICE_WAIT_SECONDS = 5


def request(client) -> tuple[int, int, int]:
    """(status, statements that read the token, LISTENs on the request's connection) of one request."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(API + "/games/")
    statements = [query["sql"] for query in queries.captured_queries]
    reads = [sql for sql in statements if not sql.lstrip().upper().startswith("UPDATE")]  # not last_used_at's
    return (response.status_code, sum("apitoken" in sql for sql in reads),
            sum(sql.startswith("LISTEN") for sql in statements))


@pytest.fixture
def pooled(settings, postgres):
    """The settings of a pooler in transaction mode (the pooled pass sets DATABASE_LISTEN_URL already)."""
    settings.DATABASE_POOLER = "transaction"
    settings.DATABASE_LISTEN_URL = settings.DATABASE_LISTEN_URL or database_urls.to_url(connection.settings_dict)
    yield settings
    listener = getattr(token_rows._direct, "connection", None)
    if listener is not None:
        listener.close()
        token_rows._direct.connection = None
    token_rows._direct.retry_at, token_rows._direct.failures = 0.0, 0


def test_without_a_listen_url_nothing_is_kept(pooled, api_as):
    pooled.DATABASE_LISTEN_URL = ""
    client = api_as(make_user("reader", Role.SUPPORT))
    assert [request(client)[:2] for _ in range(3)] == [(200, 1), (200, 1), (200, 1)]


def test_a_change_is_heard_on_the_direct_connection(pooled, second_connection, api_as):
    user = make_user("reader", Role.SUPPORT)
    client = api_as(user)
    assert [request(client) for _ in range(2)] == [(200, 1, 0), (200, 0, 0)]  # kept, and no LISTEN pooled
    listener = token_rows._direct.connection
    assert listener is not None and not listener.closed
    with second_connection.cursor() as cursor:
        cursor.execute(f"UPDATE {User._meta.db_table} SET is_active = false WHERE id = %s", [user.pk])
    readable, _, _ = select.select([listener.fileno()], [], [], NOTICE_WAIT_SECONDS)
    assert readable
    assert request(client)[:2] == (401, 1)


def test_a_lost_listener_keeps_nothing_until_a_new_one_listens(pooled, api_as):
    client = api_as(make_user("reader", Role.SUPPORT))
    assert [request(client)[:2] for _ in range(2)] == [(200, 1), (200, 0)]
    lost = token_rows._direct.connection
    with connection.cursor() as cursor:  # the server ends the listener's session (a restart, a failover)
        cursor.execute("SELECT pg_terminate_backend(%s)", [lost.info.backend_pid])
    select.select([lost.fileno()], [], [], NOTICE_WAIT_SECONDS)
    # Whatever it may have missed, nothing it kept is used: read again, by a new listener.
    assert [request(client)[:2] for _ in range(3)] == [(200, 1), (200, 1), (200, 0)]
    assert token_rows._direct.connection is not lost


def test_the_listener_comes_back_after_its_session_is_terminated_and_hears_again(pooled, second_connection,
                                                                                api_as):
    user = make_user("reader", Role.SUPPORT)
    client = api_as(user)
    for _ in range(3):  # ended three times over: each time a new listener, with no wait between
        assert [request(client)[:2] for _ in range(2)][-1] == (200, 0)
        lost = token_rows._direct.connection
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [lost.info.backend_pid])
        select.select([lost.fileno()], [], [], NOTICE_WAIT_SECONDS)
        assert [request(client)[:2] for _ in range(2)] == [(200, 1), (200, 1)]  # noticed, then a new listener
        assert token_rows._direct.connection is not lost and not token_rows._direct.connection.closed
    with second_connection.cursor() as cursor:
        cursor.execute(f"UPDATE {User._meta.db_table} SET is_active = false WHERE id = %s", [user.pk])
    select.select([token_rows._direct.connection.fileno()], [], [], NOTICE_WAIT_SECONDS)
    assert request(client)[:2] == (401, 1)


def test_a_listener_that_cannot_connect_is_tried_again_after_a_growing_back_off(pooled, api_as, monkeypatch):
    listen_url = pooled.DATABASE_LISTEN_URL
    pooled.DATABASE_LISTEN_URL = database_urls.to_url({**database_urls.parse(listen_url), "PORT": str(free_port())})
    attempts = []
    connect = token_rows.psycopg.connect

    def counted(*args, **kwargs):
        if kwargs.get("application_name") == "token-rows-listener":
            attempts.append(kwargs.get("port"))
        return connect(*args, **kwargs)

    monkeypatch.setattr(token_rows.psycopg, "connect", counted)
    client = api_as(make_user("reader", Role.SUPPORT))
    # The requests are served (each reads its token), but a server that refuses is not asked again
    # by every request: once, then after the back-off.
    assert [request(client)[:2] for _ in range(3)] == [(200, 1)] * 3
    assert len(attempts) == 1
    waits = []
    for _ in range(3):
        token_rows._direct.retry_at = 0.0  # the wait has passed
        assert request(client)[:2] == (200, 1)
        waits.append(token_rows._direct.retry_at - time.monotonic())
    assert len(attempts) == 4
    assert waits[0] < waits[1] < waits[2] <= token_rows.LISTENER_RETRY_MOST_SECONDS
    assert token_rows.retry_delay(100) == token_rows.LISTENER_RETRY_MOST_SECONDS
    # The server answers again: after the wait, a listener, and rows are kept once more.
    pooled.DATABASE_LISTEN_URL = listen_url
    token_rows._direct.retry_at = 0.0
    assert [request(client)[:2] for _ in range(2)] == [(200, 1), (200, 0)]
    assert len(attempts) == 5 and token_rows._direct.failures == 0
