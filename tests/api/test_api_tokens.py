"""API tokens through the API (administrators: list, make, rotate, revoke; never a token but once)
and the scopes of a token at work on real endpoints."""

import pytest
from django.urls import reverse

from apitokens.models import ApiToken
from audit.models import AuditEvent
from tests.api.helpers import API
from tests.apitokens.helpers import token_of
from tests.conftest import verified_login

pytestmark = pytest.mark.django_db

TOKENS = f"{API}/api-tokens/"
BET = {"account": "player-1", "bet_type": "BANKER", "stake": "10.00", "idempotency_key": "k1"}


class TestTheEndpoints:
    def test_an_administrator_makes_lists_rotates_and_revokes(self, as_admin, integration):
        made = as_admin.post(TOKENS, {"owner": "game-server", "scopes": ["read", "bets"],
                                      "allowed_ips": ["198.51.100.0/24"], "label": "table 1"}, format="json")
        assert made.status_code == 201, made.content
        body = made.json()
        token = token_of(body["token"])
        assert token.pk == body["api_token"]["id"] and body["api_token"]["scopes"] == ["read", "bets"]
        assert body["api_token"]["expires_at"] is None  # a game server's token does not expire by default
        listed = as_admin.get(TOKENS, {"owner": "game-server"})
        assert listed.status_code == 200 and [row["id"] for row in listed.json()["results"]] == [token.pk]
        assert body["token"] not in listed.content.decode() and "digest" not in listed.json()["results"][0]
        rotated = as_admin.post(f"{TOKENS}{token.pk}/rotate/", {"overlap_hours": 1}, format="json")
        assert rotated.status_code == 201 and token_of(rotated.json()["token"]).pk == rotated.json()["api_token"]["id"]
        revoked = as_admin.post(f"{TOKENS}{token.pk}/revoke/")
        assert revoked.status_code == 200 and revoked.json()["enabled"] is False
        actions = list(AuditEvent.objects.filter(action__startswith="auth.token_", actor_user__isnull=False)
                       .values_list("action", flat=True).order_by("id"))
        assert actions == ["auth.token_created", "auth.token_rotated", "auth.token_revoked"]

    def test_others_may_not(self, as_operator, as_support, as_integration):
        for client in (as_operator, as_support, as_integration):
            assert client.get(TOKENS).status_code == 403
            response = client.post(TOKENS, {"owner": "olivia-operator", "scopes": ["write"]}, format="json")
            assert response.status_code == 403 and "apitokens.add_apitoken" in response.json()["detail"]

    @pytest.mark.parametrize(("body", "field"), [
        ({"owner": "nobody-here"}, "owner"),
        ({"owner": "game-server", "scopes": ["root"]}, "scopes"),
        ({"owner": "game-server", "scopes": []}, "scopes"),
        ({"owner": "game-server", "allowed_ips": ["300.1.1.1"]}, "allowed_ips"),
        ({"owner": "game-server", "expires_at": "2001-01-01T00:00:00Z"}, "expires_at"),
    ])
    def test_bad_input_is_a_400_naming_the_field(self, as_admin, integration, body, field):
        response = as_admin.post(TOKENS, body, format="json")
        assert response.status_code == 400 and field in response.json(), response.content
        assert not ApiToken.objects.filter(owner=integration).exists()

    def test_an_unknown_token_id_is_a_404(self, as_admin):
        assert as_admin.post(f"{TOKENS}999999/rotate/", {}, format="json").status_code == 404
        assert as_admin.post(f"{TOKENS}999999/revoke/").status_code == 404

    def test_a_session_needs_a_fresh_second_factor(self, administrator, integration):
        from rest_framework.test import APIClient

        stale = verified_login(APIClient(), administrator, fresh=False)
        response = stale.post(TOKENS, {"owner": "game-server"}, format="json")
        assert response.status_code == 403 and not ApiToken.objects.filter(owner=integration).exists()
        fresh = verified_login(APIClient(), administrator)
        assert fresh.post(TOKENS, {"owner": "game-server"}, format="json").status_code == 201


class TestScopesAtWork:
    def test_a_read_token_reads_and_writes_nothing(self, api_as, operator, open_round, player):
        reader = api_as(operator, scopes=["read"])
        assert reader.get(f"{API}/games/").status_code == 200
        response = reader.post(f"{API}/accounts/", {"external_id": "p-2", "currency": "USD"}, format="json")
        assert response.status_code == 403 and "scopes (read)" in response.json()["detail"]

    def test_a_bets_token_bets_and_deals_but_reads_and_adjusts_nothing(self, api_as, integration, open_round,
                                                                      player):
        better = api_as(integration, scopes=["bets"])
        assert better.post(f"{API}/rounds/{open_round.pk}/bets/", BET, format="json").status_code == 201
        bulk = better.post(f"{API}/rounds/{open_round.pk}/bets/bulk/",
                           {"bets": [{**BET, "idempotency_key": "k2"}]}, format="json")
        assert bulk.status_code == 200, bulk.content
        assert better.get(f"{API}/games/").status_code == 403
        assert better.post(f"{API}/accounts/", {"external_id": "p-3", "currency": "USD"},
                           format="json").status_code == 403

    def test_a_write_token_does_what_the_role_may_and_no_more(self, api_as, support, operator):
        assert api_as(operator).post(f"{API}/accounts/", {"external_id": "p-4", "currency": "USD"},
                                     format="json").status_code == 201
        response = api_as(support).post(f"{API}/accounts/", {"external_id": "p-5", "currency": "USD"}, format="json")
        assert response.status_code == 403 and "role does not hold" in response.json()["detail"]


def test_the_admin_makes_a_token_shown_once_and_rotates_it(administrator, integration):
    from django.test import Client

    client = verified_login(Client(), administrator)
    add = reverse("admin:apitokens_apitoken_add")
    assert client.get(add).status_code == 200
    made = client.post(add, {"owner": integration.pk, "scopes": ["read", "bets"], "allowed_ips": "198.51.100.0/24"})
    assert made.status_code == 200, made.content
    token = ApiToken.objects.get(owner=integration)
    page = made.content.decode()
    [secret] = [word for word in page.replace("<", " ").replace(">", " ").split() if word.startswith(token.prefix)]
    assert token_of(secret) == token and token.allowed_ips == ["198.51.100.0/24"]
    listing = client.get(reverse("admin:apitokens_apitoken_changelist"))
    assert listing.status_code == 200 and secret not in listing.content.decode()
    rotated = client.post(reverse("admin:apitokens_apitoken_changelist"),
                          {"action": "rotate", "_selected_action": [token.pk]})
    assert rotated.status_code == 200 and ApiToken.objects.filter(owner=integration).count() == 2
    bad = client.post(add, {"owner": integration.pk, "scopes": ["read"], "allowed_ips": "nowhere"})
    assert bad.status_code == 200 and b"not an address or a CIDR" in bad.content
    assert ApiToken.objects.filter(owner=integration).count() == 2
