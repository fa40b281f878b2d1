"""Token authentication: the token, its user and the user's permissions in one statement, read
afresh for every request inside a transaction, as here (a role taken away holds from the next
request on); the rows kept between committed requests are tests/api/test_token_rows.py."""

import pytest
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission, User
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from apitokens.authentication import TokenAuthentication
from apitokens.services import token_create
from backoffice.roles import Role
from tests.api.helpers import API
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def authenticator() -> TokenAuthentication:
    authentication = TokenAuthentication()
    authentication.request = RequestFactory().get("/")
    return authentication


def authenticated_by(user):
    return authenticator().authenticate_credentials(token_create(owner=user, actor="system:tests")[1])


def test_a_request_reads_the_token_user_and_permissions_in_one_statement(as_support):
    with CaptureQueriesContext(connection) as queries:
        response = as_support.get(API + "/games/")
    assert response.status_code == 200, response.content
    statements = [query["sql"] for query in queries.captured_queries]
    assert all(table in statements[0] for table in ("apitokens_apitoken", "auth_user", "auth_permission")), statements
    # After it, only the token's last use (once a minute): no other read of the token or permissions.
    assert not any(table in statement for statement in statements[1:] if not statement.startswith("UPDATE")
                   for table in ("apitokens_apitoken", "auth_permission")), statements


def test_a_role_taken_away_holds_from_the_next_request(api_as, support):
    client = api_as(support)
    assert client.get(API + "/games/").status_code == 200
    support.groups.remove(Group.objects.get(name=Role.SUPPORT.group_name))
    response = client.get(API + "/games/")
    assert response.status_code == 403 and "games.view_gameinstance" in response.json()["detail"]


def test_a_permission_held_directly_counts_as_one_held_by_a_group(api_as):
    user = make_user("direct-reader", None)
    client = api_as(user)
    assert client.get(API + "/games/").status_code == 403
    user.user_permissions.add(Permission.objects.get(content_type__app_label="games", codename="view_gameinstance"))
    assert client.get(API + "/games/").status_code == 200


def test_an_unknown_token_and_an_inactive_user_are_refused_with_401(api_as, support):
    client = api_as(support)
    support.is_active = False
    support.save()
    response = client.get(API + "/games/")
    assert response.status_code == 401 and response.json()["detail"] == "User inactive or deleted."
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    response = client.get(API + "/games/")
    assert response.status_code == 401 and response.json()["detail"] == "Invalid token."


def test_a_superuser_holds_every_permission_read_in_one_statement(api_as):
    user = make_user("root", None)
    user.is_superuser = user.is_staff = True
    user.save()
    with CaptureQueriesContext(connection) as queries:
        response = api_as(user).get(API + "/games/")
    assert response.status_code == 200
    assert sum("auth_permission" in query["sql"] for query in queries.captured_queries) == 1


@pytest.mark.parametrize("role", [Role.OPERATOR, Role.SUPPORT, Role.INTEGRATION, Role.ADMIN, "superuser"])
def test_the_permissions_read_are_those_django_would_read(role):
    user = make_user("someone", None if role == "superuser" else role)
    if role == "superuser":
        user.is_superuser = True
        user.save()
    user.user_permissions.add(Permission.objects.get(content_type__app_label="auth", codename="view_user"))
    authenticated, _ = authenticated_by(user)
    assert authenticated._perm_cache == ModelBackend().get_all_permissions(User.objects.get(pk=user.pk))
    assert "auth.view_user" in authenticated._perm_cache


def test_a_user_without_permissions_holds_none(api_as):
    user = make_user("nobody", None)
    authenticated, _ = authenticated_by(user)
    assert authenticated._perm_cache == set()
    assert api_as(user).get(API + "/games/").status_code == 403


def test_the_user_is_read_with_what_a_request_needs_and_the_rest_on_first_use(support):
    support.email, support.first_name = "sam@example.com", "Sam"
    support.save()
    made, key = token_create(owner=support, actor="system:tests")
    user, token = authenticator().authenticate_credentials(key)
    assert (user.pk, user.username, user.is_active, user.is_staff, user.is_superuser) == (
        support.pk, support.username, True, support.is_staff, False)
    assert {"password", "email", "first_name", "last_login", "date_joined"} <= user.get_deferred_fields()
    assert (token.pk, token.owner) == (made.pk, user)
    assert (user.email, user.first_name) == ("sam@example.com", "Sam")  # loaded when asked for
