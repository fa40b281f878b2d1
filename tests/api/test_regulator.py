"""The regulator role through the API: every read answers, every write is a 403 naming the
permission it needs, with its token or its session, and writes nothing."""

import re
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.admindocs.views import extract_views_from_urlpatterns
from django.contrib.auth.models import Group, User
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.urls import get_resolver
from rest_framework.test import APIClient

from alerts import services as alert_services
from alerts.checks import Finding
from alerts.models import Incident
from approvals.models import Approval
from audit.models import AuditEvent
from audit.services import audit_head_sign, audit_sequence
from backoffice import roles
from backoffice.api.throttling import role_of
from backoffice.roles import READ_ONLY_ROLES, ROLE_PERMISSIONS, Role, is_read_permission, sync_role_groups
from games import services as game_services
from tests.api.helpers import API, Snapshot
from tests.conftest import api_client_for, verified_login

pytestmark = pytest.mark.django_db

UNSAFE = ("POST", "PUT", "PATCH", "DELETE")
# Views that answer only the caller's own objects (an integration client's webhook endpoints): the
# regulator owns none, so an id is a 404 there, as for every caller but its owner.
OWN_OBJECTS_ONLY = {"endpoint_id"}


def api_routes():
    """(route, view class) of every view under /api/v1/."""
    views = extract_views_from_urlpatterns(get_resolver().url_patterns)
    return [(route, callback.view_class) for callback, route, _namespace, _name in views
            if route.startswith("api/v1/") and hasattr(callback, "view_class")]


def filled(route: str, samples: dict) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda match: str(samples.get(match.group(1), 1)), route)


@pytest.fixture
def samples(game, operator, integration, administrator, funded_account, django_capture_on_commit_callbacks):
    """One of everything a read can name: a played and revealed round, a bet, an account, a held
    approval, an RTP policy, a signed head."""
    funded_account("player-1", "500.00")
    first = game_services.round_open(game_id=game.pk, actor=integration)
    bet, _ = game_services.bet_place(round_id=first.pk, account_external_id="player-1", bet_type="BANKER",
                                     stake="10.00", idempotency_key="reg-1", client=integration)
    with django_capture_on_commit_callbacks(execute=True):
        game_services.round_deal(round_id=first.pk, actor=integration)
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    funded_account("whale", "0.00")
    assert api_client_for(operator).post(f"{API}/accounts/whale/adjust/",
                                         {"amount": "50000.00", "reason": "held"}).status_code == 202
    policy = game_services.rtp_policy_create(actor=administrator, name="MGA", min_banker_rtp=Decimal("90"))
    alert, _ = alert_services.alert_raise(Finding("held_bets", "regulator", "critical", "A bet held."))
    audit_sequence()
    audit_head_sign()
    return {"slug": game.slug, "external_id": "player-1", "round_id": first.pk, "bet_id": bet.pk,
            "approval_id": Approval.objects.get().pk, "policy_id": policy.pk,
            "incident_id": Incident.objects.get(alerts=alert).pk}


QUERIES = {
    "api/v1/audit/proofs/inclusion/": lambda: {"event_id": AuditEvent.objects.order_by("pk").first().pk},
    "api/v1/audit/proofs/consistency/": lambda: {"first": 1},
}


def session_client(user) -> APIClient:
    client = APIClient()
    verified_login(client, user)
    return client


def test_the_regulator_reads_every_list_round_recall_audit_event_head_and_proof(samples, regulator):
    reads = [route for route, view in api_routes() if "GET" in getattr(view, "required_permissions", {})]
    assert len(reads) > 20
    for client in (api_client_for(regulator), session_client(regulator)):
        for route in reads:
            url = filled(route, samples)
            response = client.get(url, QUERIES[route]() if route in QUERIES else {})
            if OWN_OBJECTS_ONLY & set(re.findall(r"<(?:\w+:)?(\w+)>", route)):
                assert response.status_code == 404, (url, response.status_code, response.content)
            else:
                assert response.status_code == 200, (url, response.status_code, response.content)


@pytest.mark.parametrize("auth", ["token", "session"])
def test_every_write_of_the_api_is_refused_to_the_regulator_naming_its_permission(samples, regulator, auth):
    client = api_client_for(regulator) if auth == "token" else session_client(regulator)
    writes = [(route, method, needed) for route, view in api_routes()
              for method, needed in getattr(view, "required_permissions", {}).items()
              if method in UNSAFE and needed]  # a write that needs no permission: the step-up, any person's
    assert len(writes) > 15
    before = Snapshot.take()
    approvals = list(Approval.objects.values_list("pk", "status"))
    for route, method, needed in writes:
        url = filled(route, samples)
        response = getattr(client, method.lower())(url, {})
        assert response.status_code == 403, (url, method, response.status_code, response.content)
        needed = (needed,) if isinstance(needed, str) else needed
        assert any(permission in response.json()["detail"] for permission in needed), (url, response.content)
    assert Snapshot.take() == before
    assert list(Approval.objects.values_list("pk", "status")) == approvals


def test_the_regulator_role_holds_only_reads_and_every_read_support_holds():
    codes = ROLE_PERMISSIONS[Role.REGULATOR]
    assert all(is_read_permission(code) for code in codes)
    assert set(ROLE_PERMISSIONS[Role.SUPPORT]) <= set(codes)
    assert "audit.view_auditevent" in codes and "games.verify_round" in codes
    assert not any(code.startswith("authtoken.") for code in codes)  # tokens are secrets, not records


def test_a_read_only_role_given_a_write_is_refused_when_the_groups_are_synced(monkeypatch):
    from django.apps import apps

    assert Role.REGULATOR in READ_ONLY_ROLES
    monkeypatch.setitem(roles.ROLE_PERMISSIONS, Role.REGULATOR, [*ROLE_PERMISSIONS[Role.REGULATOR],
                                                                  "games.void_round"])
    with pytest.raises(ImproperlyConfigured, match="regulator"):
        sync_role_groups(apps)


def test_the_regulator_group_is_made_by_migrate_with_its_permissions(regulator):
    group = Group.objects.get(name="Regulators")
    held = {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.select_related("content_type")}
    assert held == set(ROLE_PERMISSIONS[Role.REGULATOR])
    assert regulator.is_staff and not regulator.is_superuser


def test_the_regulator_is_throttled_at_its_own_rate(regulator, settings):
    assert role_of(User.objects.get(pk=regulator.pk)) == "regulator"
    assert "regulator" in settings.API_THROTTLE_RATES


def test_create_staff_user_makes_a_regulator_whose_token_only_reads(samples):
    out = StringIO()
    call_command("create_staff_user", "rex", role="regulator", password="a-long-enough-pass-phrase", stdout=out)
    user = User.objects.get(username="rex")
    assert (user.is_staff, user.is_superuser) == (True, False)
    assert list(user.groups.values_list("name", flat=True)) == ["Regulators"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {out.getvalue().splitlines()[-1]}")
    assert client.get(f"{API}/rounds/").status_code == 200
    assert client.get(f"{API}/audit/head/").status_code == 200
    response = client.post(f"{API}/rounds/{samples['round_id']}/void/", {"reason": "regulator"})
    assert response.status_code == 403 and "games.void_round" in response.json()["detail"]
