"""No response ever carries the server seed of an unrevealed pair.

A full scenario calls every endpoint and method of the API (checked against the URL
configuration), successes and errors alike, plus the schema and the docs; after each response
it looks for every server seed that is unrevealed at that moment.
"""

from urllib.parse import urlsplit

import pytest
from django.urls import Resolver404, resolve

from games.api import urls as api_urls
from games.models import SeedPair
from tests.api.helpers import API

pytestmark = pytest.mark.django_db


class Walker:
    def __init__(self):
        self.visited = set()
        self.responses = 0

    def secrets(self) -> list:
        return list(SeedPair.objects.filter(revealed_at__isnull=True).values_list("server_seed", flat=True))

    def __call__(self, client, method, path, body=None, expect=None):
        url = path if path.startswith("/api/") else API + path
        if method == "get":
            response = client.get(url, body or {})
        else:
            response = getattr(client, method)(url, body if body is not None else {})
        if expect is not None:
            assert response.status_code == expect, (method, url, response.status_code, response.content)
        text = response.content.decode() + "".join(f"{name}: {value}" for name, value in response.items())
        for seed in self.secrets():
            assert seed not in text, f"{method.upper()} {url} leaked an unrevealed server seed"
            assert seed[:32] not in text and seed[32:] not in text, f"{method.upper()} {url} leaked half a seed"
        try:
            match = resolve(urlsplit(url).path)
        except Resolver404:
            match = None
        if match and match.namespace == "api":
            self.visited.add((match.url_name, method.upper()))
        self.responses += 1
        return response


def every_api_route() -> set:
    routes = set()
    for pattern in api_urls.urlpatterns:
        for method in pattern.callback.view_class.required_permissions:
            routes.add((pattern.name, method))
    return routes


def test_no_unrevealed_server_seed_in_any_response(api_as, operator, integration, support, administrator, nobody,
                                                    django_capture_on_commit_callbacks, games_created_at_once):
    walk = Walker()
    op, game_server, staff, admin = api_as(operator), api_as(integration), api_as(support), api_as(administrator)
    anonymous, stranger = api_as(None), api_as(nobody)

    # Configuration.
    walk(op, "post", "/games/", {"slug": "vip", "name": "VIP", "min_bet": "1.00", "max_bet": "500.00",
                                 "client_seed": "vip-seed"}, expect=201)
    walk(op, "post", "/games/", {"slug": "vip", "name": "VIP", "min_bet": "1.00", "max_bet": "500.00"}, expect=400)
    walk(op, "patch", "/games/vip/", {"tie_multiplier": "8.0", "reason": "launch"}, expect=200)
    walk(op, "patch", "/games/vip/", {"tie_multiplier": "NaN", "reason": "launch"}, expect=400)
    policy = walk(admin, "post", "/rtp-policies/", {"name": "MGA", "min_banker_rtp": "97.0000"}, expect=201).json()
    walk(op, "post", "/rtp-policies/", {"name": "Other"}, expect=403)
    walk(staff, "get", "/rtp-policies/", expect=200)
    walk(staff, "get", f"/rtp-policies/{policy['id']}/", expect=200)
    walk(admin, "patch", f"/rtp-policies/{policy['id']}/", {"max_rtp": "99.5", "reason": "cap"}, expect=200)
    for client in (op, staff, game_server, admin):
        walk(client, "get", "/games/", expect=200)
        walk(client, "get", "/games/vip/", expect=200)
        walk(client, "get", "/games/vip/odds/", expect=200)
        walk(client, "get", "/games/vip/seeds/", expect=200)

    # Accounts.
    walk(game_server, "post", "/accounts/", {"external_id": "p1"}, expect=201)
    walk(op, "post", "/accounts/", {"external_id": "p2", "currency": "USD"}, expect=201)
    walk(op, "post", "/accounts/p1/adjust/", {"amount": "300.00", "reason": "deposit"}, expect=201)
    walk(op, "post", "/accounts/p2/adjust/", {"amount": "300.00", "reason": "deposit"}, expect=201)
    walk(op, "post", "/accounts/p2/adjust/", {"amount": "-1000.00", "reason": "too much"}, expect=400)

    # Rounds and bets on the first pair.
    first = walk(game_server, "post", "/games/vip/rounds/", expect=201).json()["id"]
    second = walk(game_server, "post", "/games/vip/rounds/", expect=201).json()["id"]
    bet_ids = []
    for index, (round_id, account, bet_type) in enumerate(
            [(first, "p1", "PLAYER"), (first, "p2", "BANKER"), (first, "p1", "TIE"), (second, "p2", "PLAYER")]):
        body = {"account": account, "bet_type": bet_type, "stake": "10.00", "idempotency_key": f"k{index}"}
        bet_ids.append(walk(game_server, "post", f"/rounds/{round_id}/bets/", body, expect=201).json()["id"])
    walk(game_server, "post", f"/rounds/{first}/bets/",
         {"account": "p1", "bet_type": "PLAYER", "stake": "10.00", "idempotency_key": "k0"}, expect=200)
    walk(game_server, "post", f"/rounds/{first}/bets/",
         {"account": "p1", "bet_type": "BANKER", "stake": "10.00", "idempotency_key": "k0"}, expect=409)
    walk(game_server, "post", f"/rounds/{first}/bets/",
         {"account": "p1", "bet_type": "BANKER", "stake": "9999.00", "idempotency_key": "k9"}, expect=400)
    walk(game_server, "post", f"/rounds/{first}/bets/bulk/", {"bets": [
        {"account": "p2", "bet_type": "TIE", "stake": "1.00", "idempotency_key": "bulk-1"},
        {"account": "p1", "bet_type": "PLAYER", "stake": "10.00", "idempotency_key": "k0"},
        {"account": "p1", "bet_type": "TIE", "stake": "9999.00", "idempotency_key": "bulk-2"},
    ]}, expect=200)
    for client in (op, staff, game_server, admin):
        walk(client, "get", f"/rounds/{first}/", expect=200)
        walk(client, "get", f"/rounds/{first}/verify/", expect=409)
    # Rotation with rounds open: the new pair takes over, the old seed stays secret until they close.
    walk(op, "post", "/games/vip/seeds/rotate/", {"reason": "rotation"}, expect=202)

    with django_capture_on_commit_callbacks(execute=True):
        walk(game_server, "post", f"/rounds/{first}/deal/", expect=200)
    walk(game_server, "post", f"/rounds/{first}/deal/", expect=200)
    for client in (op, staff, game_server, admin):
        walk(client, "get", f"/rounds/{first}/", expect=200)
        walk(client, "get", f"/rounds/{first}/verify/", expect=409)  # dealt, seed still secret
        walk(client, "get", "/rounds/", expect=200)
        walk(client, "get", "/rounds/", {"game": "vip", "status": "SETTLED"}, expect=200)
        walk(client, "get", "/games/vip/rounds/", expect=200)
        walk(client, "get", "/bets/", expect=200)
        walk(client, "get", "/bets/", {"round": first}, expect=200)
        for bet_id in bet_ids:
            walk(client, "get", f"/bets/{bet_id}/", expect=200)
        walk(client, "get", "/accounts/", expect=200)
        walk(client, "get", "/accounts/p1/", expect=200)
        walk(client, "get", "/accounts/p1/ledger/", expect=200)
    # Voiding the pair's last open round reveals it.
    walk(op, "post", f"/rounds/{second}/void/", {"reason": "table fault"}, expect=200)
    walk(op, "post", f"/rounds/{second}/void/", {"reason": "again"}, expect=409)
    walk(game_server, "post", f"/rounds/{second}/bets/",
         {"account": "p1", "bet_type": "TIE", "stake": "1.00", "idempotency_key": "late"}, expect=409)
    walk(staff, "get", f"/rounds/{first}/verify/", expect=200)

    # Reveal the second pair (no round open), and play on with a third.
    walk(op, "post", "/games/vip/seeds/rotate/", {"reason": "rotation", "client_seed": "next-seed"}, expect=200)
    third = walk(game_server, "post", "/games/vip/rounds/", expect=201).json()["id"]
    walk(game_server, "post", f"/rounds/{third}/bets/",
         {"account": "p1", "bet_type": "BANKER", "stake": "5.00", "idempotency_key": "k10"}, expect=201)
    walk(game_server, "post", f"/rounds/{third}/deal/", expect=200)
    for client in (op, staff, game_server, admin):
        assert walk(client, "get", f"/rounds/{first}/verify/", expect=200).json()["verified"] is True
        walk(client, "get", f"/rounds/{second}/verify/", expect=409)  # voided before the deal
        walk(client, "get", f"/rounds/{third}/verify/", expect=409)
        walk(client, "get", f"/rounds/{third}/", expect=200)
        walk(client, "get", "/games/vip/seeds/", expect=200)
        walk(client, "get", "/rounds/", expect=200)
    # The audit trail records every step above, seed rotation included: none of it names a secret.
    for client in (op, staff, admin):
        walk(client, "get", "/audit/head/", expect=200)
        walk(client, "get", "/audit/events/", {"page_size": 200}, expect=200)
        walk(client, "get", "/audit/events/", {"object_type": "seedpair"}, expect=200)
    walk(game_server, "get", "/audit/events/", expect=403)

    # Errors of every kind, and the documentation.
    for client, expect in ((anonymous, 401), (stranger, 403)):
        walk(client, "get", f"/rounds/{third}/", expect=expect)
        walk(client, "get", "/games/vip/seeds/", expect=expect)
        walk(client, "post", "/games/vip/seeds/rotate/", {}, expect=expect)
    walk(staff, "get", "/rounds/999999/", expect=404)
    walk(staff, "get", "/rounds/abc/", expect=404)
    walk(staff, "delete", f"/rounds/{third}/", expect=405)
    walk(staff, "get", "/api/schema/", expect=200)
    walk(staff, "get", "/api/docs/", expect=200)

    missing = every_api_route() - walk.visited
    assert not missing, f"endpoints the walk did not call: {sorted(missing)}"

    # The check above could see a seed: the revealed one is shown where it should be.
    revealed = SeedPair.objects.filter(game__slug="vip", client_seed="vip-seed").earliest("id")
    assert revealed.revealed_at is not None
    assert revealed.server_seed in walk(staff, "get", f"/rounds/{first}/").content.decode()
