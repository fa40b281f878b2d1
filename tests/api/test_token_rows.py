"""Token rows kept between requests (backoffice.api.token_rows): read once per connection and read
again as soon as anything they were read from changes, by whichever connection; never kept inside a
transaction. These tests commit, as requests in production do."""

import select

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from apitokens.models import ApiToken
from apitokens.services import token_create, token_revoke
from backoffice.api.token_rows import CHANNEL, notices_kept_by
from backoffice.roles import Role
from tests.api.helpers import API
from tests.conftest import make_user

NOTICE_WAIT_SECONDS = 5


def request(client) -> tuple[int, int, int]:
    """(status, statements that read the token, LISTENs) of one authenticated request."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(API + "/games/")
    statements = [query["sql"] for query in queries.captured_queries]
    return (response.status_code, sum(sql.startswith("SELECT") and "apitokens_apitoken" in sql for sql in statements),
            sum(sql.startswith("LISTEN") for sql in statements))


def test_a_transaction_and_manual_commits_keep_nothing(transactional_db, api_as):
    client = api_as(make_user("reader", Role.SUPPORT))
    assert [request(client)[:2] for _ in range(2)] == [(200, 1), (200, 0)]
    with transaction.atomic():
        assert [request(client) for _ in range(2)] == [(200, 1, 0), (200, 1, 0)]
    transaction.set_autocommit(False)
    try:
        assert [request(client) for _ in range(2)] == [(200, 1, 0), (200, 1, 0)]
    finally:
        transaction.rollback()
        transaction.set_autocommit(True)



@pytest.mark.services
def test_a_token_is_read_once_per_connection_and_listened_for_first(postgres, api_as):
    client = api_as(make_user("reader", Role.SUPPORT))
    assert [request(client) for _ in range(3)] == [(200, 1, 1), (200, 0, 0), (200, 0, 0)]
    connection.close()  # a new connection has heard nothing: it listens and reads again
    assert [request(client) for _ in range(2)] == [(200, 1, 1), (200, 0, 0)]


def _token_deleted(user):
    ApiToken.objects.filter(owner=user).delete()


def _token_revoked(user):
    token_revoke(token_id=ApiToken.objects.get(owner=user).pk, actor="system:tests")


def _token_expired(user):
    ApiToken.objects.filter(owner=user).update(expires_at="2000-01-01T00:00:00Z")


def _token_narrowed(user):
    ApiToken.objects.filter(owner=user).update(allowed_ips=["192.0.2.0/24"])


def _deactivated(user):
    User.objects.filter(pk=user.pk).update(is_active=False)


def _role_taken_away(user):
    user.groups.clear()


def _permission_taken_from_the_role(user):
    Group.objects.get(name=Role.SUPPORT.group_name).permissions.remove(
        Permission.objects.get(content_type__app_label="games", codename="view_gameinstance"))


@pytest.mark.services
@pytest.mark.parametrize(("change", "status"), [
    (_token_deleted, 401), (_token_revoked, 401), (_token_expired, 401), (_token_narrowed, 401),
    (_deactivated, 401), (_role_taken_away, 403),
    (_permission_taken_from_the_role, 403),
])
def test_a_change_holds_from_the_next_request(postgres, api_as, change, status):
    user = make_user("reader", Role.SUPPORT)
    client = api_as(user)
    assert [request(client)[:2] for _ in range(2)] == [(200, 1), (200, 0)]
    change(user)
    assert request(client)[:2] == (status, 1)


@pytest.mark.services
def test_a_permission_given_holds_from_the_next_request(postgres, api_as):
    user = make_user("nobody", None)
    client = api_as(user)
    assert [request(client)[:2] for _ in range(2)] == [(403, 1), (403, 0)]
    User.objects.filter(pk=user.pk).update(is_superuser=True)
    assert request(client)[:2] == (200, 1)


@pytest.mark.services
def test_a_change_committed_by_ansecond_connection_is_heard(postgres, second_connection, api_as):
    user = make_user("reader", Role.SUPPORT)
    client = api_as(user)
    assert [request(client)[:2] for _ in range(2)] == [(200, 1), (200, 0)]
    with second_connection.cursor() as cursor:
        cursor.execute(f"UPDATE {User._meta.db_table} SET is_active = false WHERE id = %s", [user.pk])
    # The notice reaches this connection's socket a moment after the commit, as it would reach a
    # web process between two requests.
    readable, _, _ = select.select([connection.connection.fileno()], [], [], NOTICE_WAIT_SECONDS)
    assert readable
    assert request(client)[:2] == (401, 1)


def _listening(wrapper):
    with wrapper.cursor() as cursor:
        cursor.execute(f"LISTEN {CHANNEL}")


@pytest.mark.services
@pytest.mark.parametrize(("table", "change"), [
    ("apitokens_apitoken", lambda user: token_create(owner=user, actor="system:tests")),
    ("apitokens_apitoken", lambda user: ApiToken.objects.filter(owner=user).update(enabled=False)),
    ("auth_user", lambda user: User.objects.filter(pk=user.pk).update(last_name="Changed")),
    ("auth_user_groups", lambda user: user.groups.clear()),
    ("auth_user_user_permissions", lambda user: user.user_permissions.add(Permission.objects.first())),
    ("auth_group", lambda user: Group.objects.filter(name=Role.SUPPORT.group_name).update(name="Renamed")),
    ("auth_group_permissions", lambda user: Group.objects.get(name=Role.SUPPORT.group_name).permissions.clear()),
    ("auth_permission", lambda user: Permission.objects.filter(codename="view_gameinstance").update(name="Seeing")),
    ("django_content_type", lambda user: ContentType.objects.filter(model="gameinstance").update(model="game")),
])
def test_every_table_the_rows_come_from_notifies_its_change(postgres, second_connection, table, change):
    user = make_user("reader", Role.SUPPORT)
    _listening(second_connection)
    change(user)
    notices = list(second_connection.connection.notifies(timeout=NOTICE_WAIT_SECONDS, stop_after=1))
    assert [(notice.channel, notice.payload) for notice in notices] == [(CHANNEL, table)]


@pytest.mark.services
@pytest.mark.parametrize(("size", "seconds", "reads"), [(0, 60, [1, 1, 1]), (-1, 60, [1, 1, 1]), (1, 60, [1, 1, 1]),
                                                        (2, 60, [1, 0, 0]), (2, 0, [1, 1, 1])])
def test_the_settings_bound_what_is_kept(postgres, api_as, settings, size, seconds, reads):
    settings.API_TOKEN_CACHE_SIZE, settings.API_TOKEN_CACHE_SECONDS = size, seconds
    first, second = api_as(make_user("first", Role.SUPPORT)), api_as(make_user("second", Role.SUPPORT))
    request(first)
    # The second token's row, then the first's again: kept unless the cache is off, holds one row,
    # or keeps none for long enough.
    assert [request(client)[:2] for client in (second, first, second)] == [(200, read) for read in reads]


@pytest.mark.services
def test_an_unknown_token_is_read_every_time(postgres, api_as):
    client = api_as(None)
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert [request(client)[:2] for _ in range(2)] == [(401, 1), (401, 1)]


@pytest.mark.services
def test_a_connection_closed_after_each_request_keeps_nothing(postgres, api_as, monkeypatch):
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)
    client = api_as(make_user("reader", Role.SUPPORT))
    assert [request(client) for _ in range(2)] == [(200, 1, 0), (200, 1, 0)]


@pytest.mark.parametrize(("version", "kept"), [("3.2.3", False), ("3.1.20", False), ("3.2.4", True), ("3.3.9", True),
                                               ("3.10.0.dev1", True), ("4.0.0", True), ("unknown", False)])
def test_only_a_psycopg_that_keeps_notices_arriving_during_a_query_is_trusted(version, kept):
    assert notices_kept_by(version) is kept


@pytest.mark.services
def test_a_tokens_last_use_is_written_without_a_notice(postgres, second_connection, api_as):
    """last_used_at changes once a minute per token: no kept row is dropped for it."""
    client = api_as(make_user("reader", Role.SUPPORT))
    _listening(second_connection)
    assert request(client)[0] == 200
    assert ApiToken.objects.get(pk=client.api_token.pk).last_used_at is not None
    assert list(second_connection.connection.notifies(timeout=1)) == []
