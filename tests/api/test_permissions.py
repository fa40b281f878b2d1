"""The role matrix: every role against every endpoint (games.roles.ROLE_PERMISSIONS).

A role holding the endpoint's permission gets a 2xx, an authenticated user without it 403,
an anonymous client 401 (with a WWW-Authenticate challenge).
"""

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from backoffice.roles import ROLE_PERMISSIONS, Role
from games import services
from tests.api.helpers import API, Snapshot
from tests.conftest import api_client_for, verified_login

pytestmark = pytest.mark.django_db

OPERATOR, SUPPORT, INTEGRATION, ADMIN, REGULATOR = "operator", "support", "integration", "administrator", "regulator"
READERS = {OPERATOR, SUPPORT, INTEGRATION, ADMIN, REGULATOR}


@dataclass
class World:
    """A game whose first round (dealt) has a revealed seed, a second round open with a bet."""

    game: object
    revealed_round: object
    open_round: object
    bet: object


@pytest.fixture
def world(game, operator, integration, funded_account):
    funded_account("player-1", "500.00")
    first = services.round_open(game_id=game.pk, actor=integration)
    services.round_deal(round_id=first.pk, actor=integration)
    services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    second = services.round_open(game_id=game.pk, actor=integration)
    bet, _ = services.bet_place(round_id=second.pk, account_external_id="player-1", bet_type="PLAYER",
                                stake="10.00", idempotency_key="matrix", client=integration)
    return World(game, first, second, bet)


def free_the_seed_pair(world, operator):
    """Rotation is refused while a round of the pair is open."""
    services.round_void(round_id=world.open_round.pk, actor=operator, reason="matrix")


@dataclass
class Endpoint:
    name: str
    method: str
    path: Callable
    allowed: set
    body: dict | None = None
    prepare: Callable | None = None

    def __str__(self):
        return self.name


ENDPOINTS = [
    Endpoint("games.list", "get", lambda w: "/games/", READERS),
    Endpoint("games.create", "post", lambda w: "/games/", {OPERATOR, ADMIN},
             {"slug": "new-table", "name": "New", "min_bet": "1.00", "max_bet": "10.00", "reason": "matrix"}),
    Endpoint("games.detail", "get", lambda w: "/games/main-table/", READERS),
    Endpoint("games.update", "patch", lambda w: "/games/main-table/", {OPERATOR, ADMIN},
             {"tie_multiplier": "8.5", "reason": "matrix"}),
    Endpoint("games.odds", "get", lambda w: "/games/main-table/odds/", READERS),
    Endpoint("games.seeds", "get", lambda w: "/games/main-table/seeds/", READERS),
    Endpoint("games.seeds.rotate", "post", lambda w: "/games/main-table/seeds/rotate/", {OPERATOR, ADMIN},
             {"reason": "weekly rotation"}, prepare=free_the_seed_pair),
    Endpoint("games.rounds.list", "get", lambda w: "/games/main-table/rounds/", READERS),
    Endpoint("games.rounds.open", "post", lambda w: "/games/main-table/rounds/", {INTEGRATION, ADMIN}),
    Endpoint("rounds.list", "get", lambda w: "/rounds/", READERS),
    Endpoint("rounds.detail", "get", lambda w: f"/rounds/{w.open_round.pk}/", READERS),
    Endpoint("rounds.bets.place", "post", lambda w: f"/rounds/{w.open_round.pk}/bets/", {INTEGRATION, ADMIN},
             {"account": "player-1", "bet_type": "TIE", "stake": "1.00", "idempotency_key": "matrix-2"}),
    Endpoint("rounds.bets.bulk", "post", lambda w: f"/rounds/{w.open_round.pk}/bets/bulk/", {INTEGRATION, ADMIN},
             {"bets": [{"account": "player-1", "bet_type": "TIE", "stake": "1.00", "idempotency_key": "matrix-3"}]}),
    Endpoint("rounds.deal", "post", lambda w: f"/rounds/{w.open_round.pk}/deal/", {INTEGRATION, ADMIN}),
    Endpoint("rounds.void", "post", lambda w: f"/rounds/{w.open_round.pk}/void/", {OPERATOR, ADMIN},
             {"reason": "matrix"}),
    Endpoint("rounds.verify", "get", lambda w: f"/rounds/{w.revealed_round.pk}/verify/", READERS),
    Endpoint("bets.list", "get", lambda w: "/bets/", READERS),
    Endpoint("bets.detail", "get", lambda w: f"/bets/{w.bet.pk}/", READERS),
    Endpoint("accounts.list", "get", lambda w: "/accounts/", READERS),
    Endpoint("accounts.create", "post", lambda w: "/accounts/", {OPERATOR, INTEGRATION, ADMIN},
             {"external_id": "player-2"}),
    Endpoint("accounts.detail", "get", lambda w: "/accounts/player-1/", READERS),
    Endpoint("accounts.ledger", "get", lambda w: "/accounts/player-1/ledger/", READERS),
    Endpoint("accounts.adjust", "post", lambda w: "/accounts/player-1/adjust/", {OPERATOR, ADMIN},
             {"amount": "5.00", "reason": "matrix"}),
    Endpoint("audit.head", "get", lambda w: "/audit/head/", {OPERATOR, SUPPORT, ADMIN, REGULATOR}),
    Endpoint("audit.events", "get", lambda w: "/audit/events/?object_type=round",
             {OPERATOR, SUPPORT, ADMIN, REGULATOR}),
]

ROLES = [OPERATOR, SUPPORT, INTEGRATION, ADMIN, REGULATOR, "nobody"]


def call(client: APIClient, endpoint: Endpoint, world: World):
    method = getattr(client, endpoint.method)
    url = API + endpoint.path(world)
    if endpoint.method == "get":
        return method(url)
    return method(url, endpoint.body or {})


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
@pytest.mark.parametrize("role", ROLES)
def test_role_matrix(request, world, operator, endpoint, role):
    if endpoint.prepare:
        endpoint.prepare(world, operator)
    client = api_client_for(request.getfixturevalue(role))  # its token, made here, is audited (auth.token_created)
    before = Snapshot.take()
    response = call(client, endpoint, world)
    if role in endpoint.allowed:
        assert 200 <= response.status_code < 300, (response.status_code, response.content)
    else:
        assert response.status_code == 403, (response.status_code, response.content)
        assert "permission" in response.json()["detail"]
        assert Snapshot.take() == before


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_anonymous_is_401_everywhere(world, operator, endpoint):
    if endpoint.prepare:
        endpoint.prepare(world, operator)
    before = Snapshot.take()
    response = call(api_client_for(None), endpoint, world)
    assert response.status_code == 401, response.content
    assert response["WWW-Authenticate"] == "Token"
    assert Snapshot.take() == before


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_a_superuser_outside_every_group_may_do_everything(world, operator, endpoint):
    if endpoint.prepare:
        endpoint.prepare(world, operator)
    root = User.objects.create_superuser("root", password="correct-horse-battery")
    response = call(api_client_for(root), endpoint, world)
    assert 200 <= response.status_code < 300, (response.status_code, response.content)


def test_a_bad_token_is_401(world):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get(f"{API}/games/").status_code == 401


def test_the_matrix_above_follows_the_role_table():
    """The expected sets are derived by hand; check them against games.roles so they cannot drift."""
    holders = {
        OPERATOR: set(ROLE_PERMISSIONS[Role.OPERATOR]),
        SUPPORT: set(ROLE_PERMISSIONS[Role.SUPPORT]),
        INTEGRATION: set(ROLE_PERMISSIONS[Role.INTEGRATION]),
        REGULATOR: set(ROLE_PERMISSIONS[Role.REGULATOR]),
    }
    needs = {
        "games.create": "games.add_gameinstance", "games.update": "games.change_gameinstance",
        "games.seeds.rotate": "games.rotate_seeds", "games.rounds.open": "games.open_round",
        "rounds.bets.place": "games.place_bet", "rounds.deal": "games.deal_round",
        "rounds.void": "games.void_round", "rounds.verify": "games.verify_round",
        "accounts.create": "wallet.add_account", "accounts.adjust": "wallet.adjust_account",
        "audit.head": "audit.view_auditevent", "audit.events": "audit.view_auditevent",
    }
    for endpoint in ENDPOINTS:
        if endpoint.name in needs:
            expected = {role for role, perms in holders.items() if needs[endpoint.name] in perms} | {ADMIN}
            assert endpoint.allowed == expected, endpoint.name


class TestSessionAuthentication:
    def test_a_logged_in_staff_user_reads_with_the_session(self, world, support):
        client = APIClient()
        verified_login(client, support)
        assert client.get(f"{API}/games/").status_code == 200

    def test_unsafe_methods_need_the_csrf_token(self, world, operator):
        client = APIClient(enforce_csrf_checks=True)
        verified_login(client, operator)
        before = Snapshot.take()
        response = client.post(f"{API}/accounts/", {"external_id": "csrf-less"})
        assert response.status_code == 403
        assert "CSRF" in response.json()["detail"]
        assert Snapshot.take() == before
