"""Who may use the token endpoints, and tokens that must not work: a read-scope token, another role's,
an expired, revoked or inactive one, one used from outside its addresses (X-Forwarded-For from a peer
that is no trusted proxy changes nothing), and races of rotation and revocation on PostgreSQL."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apitokens import services
from apitokens.models import ApiToken
from core.errors import Conflict
from tests.api.helpers import API
from tests.conftest import api_client_for
from tests.races import together

TOKENS = f"{API}/api-tokens/"


@pytest.fixture
def target(integration):
    token, _secret = services.token_create(owner=integration, actor="system:tests", scopes=["bets"])
    return token


def attempts(client, token) -> list:
    return [client.get(TOKENS), client.post(TOKENS, {"owner": "game-server"}, format="json"),
            client.post(f"{TOKENS}{token.pk}/rotate/", {}, format="json"),
            client.post(f"{TOKENS}{token.pk}/revoke/", format="json")]


def assert_untouched(token):
    token.refresh_from_db()
    assert token.enabled and token.expires_at is None
    assert not ApiToken.objects.filter(rotated_from=token).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("scopes", [["read"], ["bets"], ["read", "bets"]])
def test_an_administrator_s_token_without_the_write_scope_changes_no_token(administrator, target, scopes):
    client = api_client_for(administrator, scopes=scopes)
    for response in attempts(client, target)[1:]:
        assert response.status_code == 403 and "detail" in response.json(), response.content
    assert_untouched(target)


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["operator", "support", "integration", "regulator", "nobody"])
def test_no_other_role_touches_tokens_even_its_own(request, target, role):
    user = request.getfixturevalue(role)
    client = api_client_for(user)
    own_expiry, count = client.api_token.expires_at, ApiToken.objects.count()
    listed = client.get(TOKENS)  # a regulator reads the list (never a token); no other role
    assert listed.status_code == (200 if role == "regulator" else 403), listed.content
    for response in attempts(client, target)[1:] + attempts(client, client.api_token)[1:]:
        assert response.status_code == 403, response.content
    client.api_token.refresh_from_db()
    assert client.api_token.enabled and client.api_token.expires_at == own_expiry
    assert ApiToken.objects.count() == count
    assert_untouched(target)


@pytest.mark.django_db
@pytest.mark.parametrize("spoil", ["expired", "revoked", "inactive", "elsewhere"])
def test_a_token_that_must_not_work_is_a_json_401(administrator, target, spoil):
    client = api_client_for(administrator, allowed_ips=["198.51.100.0/24"])
    token = client.api_token
    if spoil == "expired":
        ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    elif spoil == "revoked":
        services.token_revoke(token_id=token.pk, actor="system:tests")
    elif spoil == "inactive":
        administrator.is_active = False
        administrator.save()
    address = "203.0.113.9" if spoil == "elsewhere" else "198.51.100.7"
    for response in attempts(client, target):
        assert response.status_code == 401 and "detail" in response.json(), response.content
    response = client.post(f"{TOKENS}{target.pk}/revoke/", REMOTE_ADDR=address)
    if spoil == "elsewhere":
        assert client.get(TOKENS, REMOTE_ADDR="198.51.100.7").status_code == 200
    assert response.status_code == 401 and "detail" in response.json(), response.content
    assert_untouched(target)


@pytest.mark.django_db
@pytest.mark.parametrize("forwarded", ["198.51.100.7", "203.0.113.9, 198.51.100.7", "198.51.100.7\x00",
                                       "198.51.100.7, unknown", "[198.51.100.7]:1", "\u202e198.51.100.7"])
def test_x_forwarded_for_from_an_untrusted_peer_changes_nothing(administrator, target, settings, forwarded):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    client = api_client_for(administrator, allowed_ips=["198.51.100.0/24"])
    response = client.post(f"{TOKENS}{target.pk}/revoke/", REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR=forwarded)
    assert response.status_code == 401, response.content
    assert_untouched(target)
    trusted = client.post(f"{TOKENS}{target.pk}/revoke/", REMOTE_ADDR="10.1.2.3",
                          HTTP_X_FORWARDED_FOR="203.0.113.9, 198.51.100.7")
    assert trusted.status_code == 200, trusted.content


@pytest.mark.django_db
@pytest.mark.parametrize("header", ["Token", "Token ", "Token a b", "Bearer x", "Token " + "x" * 10000,
                                    "Token bo_\u00ff\u00fe", "token\tbo_x", "Token bo_\x01\x02"])
def test_a_malformed_authorization_header_is_a_json_401(target, header):
    response = APIClient().post(f"{TOKENS}{target.pk}/revoke/", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401 and "detail" in response.json(), response.content
    assert_untouched(target)


@pytest.mark.django_db(transaction=True)
def test_two_rotations_at_once_make_exactly_one_new_token(postgres, integration, target):
    outcomes = together([lambda: services.token_rotate(token_id=target.pk, actor="system:tests")] * 4)
    made = [outcome for outcome in outcomes if isinstance(outcome, tuple)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, Conflict)]
    assert (len(made), len(refused)) == (1, 3), outcomes
    live = [token for token in ApiToken.objects.filter(owner=integration) if token.pk != target.pk]
    assert [token.pk for token in live] == [made[0][0].pk] and live[0].rotated_from_id == target.pk


@pytest.mark.django_db(transaction=True)
def test_two_rotations_through_the_api_at_once(postgres, administrator, integration, target):
    clients = [api_client_for(administrator) for _ in range(3)]
    outcomes = together([lambda c=c: c.post(f"{TOKENS}{target.pk}/rotate/", {}, format="json") for c in clients])
    assert sorted(response.status_code for response in outcomes) == [201, 409, 409]
    assert ApiToken.objects.filter(owner=integration).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_token_revoked_while_in_use_is_refused_from_then_on(postgres, administrator, integration):
    user_client = api_client_for(integration, scopes=["read"])
    token = user_client.api_token

    def use():
        return [user_client.get(f"{API}/games/").status_code for _ in range(20)]

    def revoke():
        return services.token_revoke(token_id=token.pk, actor="system:tests")

    outcomes = together([use, revoke, use])
    assert all(code in (200, 401) for code in outcomes[0] + outcomes[2])
    for uses in (outcomes[0], outcomes[2]):  # once refused, never accepted again
        assert 200 not in uses[uses.index(401):] if 401 in uses else True
    assert user_client.get(f"{API}/games/").status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize("agent", ["curl\x00/8", "a\ud800b", "\u202eevil", "x" * 20000, "\x1b[31mred\x07"])
def test_a_hostile_user_agent_on_a_refused_token_is_recorded_or_refused_never_a_500(target, agent):
    from audit.models import AuditEvent

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token bo_" + "Q" * 40)
    response = client.get(TOKENS, HTTP_USER_AGENT=agent)
    assert response.status_code in (400, 401) and response.json(), response.content
    for event in AuditEvent.objects.filter(action="auth.token_refused"):
        assert "\x00" not in str(event.after) and len(str(event.after)) < 5000


@pytest.mark.django_db
@pytest.mark.parametrize("agent", ["curl\x00/8", "\u202eevil", "x" * 20000])
def test_a_hostile_user_agent_on_a_failed_sign_in_is_never_a_500(operator, agent):
    from django.test import Client
    from django.urls import reverse

    response = Client(HTTP_USER_AGENT=agent).post(reverse("admin:login"),
                                                   {"username": operator.username, "password": "wrong"})
    assert response.status_code in (200, 400)
