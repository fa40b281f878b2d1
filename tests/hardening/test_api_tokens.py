"""Hostile input to the API token endpoints (/api/v1/api-tokens/): every refusal is a JSON 4xx
naming the field and writes nothing; no answer but the one that makes a token holds a token."""

import json

import pytest
from rest_framework.test import APIClient

from apitokens.models import ApiToken
from audit.models import AuditEvent
from tests.api.helpers import API, assert_names_field

pytestmark = pytest.mark.django_db

TOKENS = f"{API}/api-tokens/"
OWNER = {"owner": "game-server"}


def nothing_written(integration):
    return not ApiToken.objects.filter(owner=integration).exists()


@pytest.mark.parametrize(("body", "field"), [
    # Times a datetime cannot hold once in UTC, or that are not times at all.
    ({"expires_at": "9999-12-31T23:59:59-01:00"}, "expires_at"),
    ({"expires_at": "10000-01-01T00:00:00Z"}, "expires_at"),
    ({"expires_at": "0001-01-01T00:00:00+01:00"}, "expires_at"),
    ({"expires_at": "1969-12-31T23:59:59Z"}, "expires_at"),
    ({"expires_at": "tomorrow"}, "expires_at"),
    ({"expires_at": "31/12/2030"}, "expires_at"),
    ({"expires_at": 1893456000}, "expires_at"),
    ({"expires_at": {"year": 2100}}, "expires_at"),
    ({"expires_at": True}, "expires_at"),
    ({"expires_at": ["2030-01-01T00:00:00Z"]}, "expires_at"),
    ({"expires_at": "2030-01-01T00:00:00\u202eZ"}, "expires_at"),
    # Scopes unknown, of the wrong type, or not a list.
    ({"scopes": ["root"]}, "scopes"),
    ({"scopes": ["READ"]}, "scopes"),
    ({"scopes": [" read "]}, "scopes"),
    ({"scopes": "read"}, "scopes"),
    ({"scopes": [None]}, "scopes"),
    ({"scopes": [True]}, "scopes"),
    ({"scopes": [["read"]]}, "scopes"),
    ({"scopes": {"read": 1}}, "scopes"),
    ({"scopes": ["re\u200bad"]}, "scopes"),
    # Addresses that are none, or too many.
    ({"allowed_ips": ["300.1.1.1"]}, "allowed_ips"),
    ({"allowed_ips": ["10.0.0.0/33"]}, "allowed_ips"),
    ({"allowed_ips": ["10.0.0.0/-1"]}, "allowed_ips"),
    ({"allowed_ips": ["10.0.0.1/255.0.255.0"]}, "allowed_ips"),
    ({"allowed_ips": ["fe80::1%eth0"]}, "allowed_ips"),
    ({"allowed_ips": ["fe80::1%eth0/64"]}, "allowed_ips"),
    ({"allowed_ips": ["١٠.0.0.1"]}, "allowed_ips"),
    ({"allowed_ips": ["10.0.0.1\u200b"]}, "allowed_ips"),
    ({"allowed_ips": ["10.0.0.1\x01"]}, "allowed_ips"),
    ({"allowed_ips": [True]}, "allowed_ips"),
    ({"allowed_ips": [{"ip": "10.0.0.1"}]}, "allowed_ips"),
    ({"allowed_ips": "10.0.0.1"}, "allowed_ips"),
    ({"allowed_ips": [f"10.0.{i // 250}.{i % 250}" for i in range(51)]}, "allowed_ips"),
    ({"allowed_ips": [f"10.{i // 62500}.{i // 250 % 250}.{i % 250}" for i in range(5000)]}, "allowed_ips"),
    # Labels a person could be misled by, or too long.
    ({"label": "x" * 101}, "label"),
    ({"label": "table\x07one"}, "label"),
    ({"label": "table\none"}, "label"),
    ({"label": "table one\n"}, "label"),
    ({"label": "\x85table"}, "label"),
    ({"label": "table \u202eeno"}, "label"),
    ({"label": "table \u2067one"}, "label"),
    ({"label": 5}, "label"),
    ({"label": "Table one אב café́ ‍"}, None),  # other scripts and marks are text
    # Fields the endpoint does not take are named, not dropped: a typo must not look accepted.
    ({"scope": ["write"]}, "scope"),
    ({"enabled": False}, "enabled"),
    ({"prefix": "bo_mine"}, "prefix"),
    # The owner.
    ({"owner": "nobody-of-that-name"}, "owner"),
    ({"owner": ""}, "owner"),
    ({"owner": None}, "owner"),
    ({"owner": ["game-server"]}, "owner"),
    ({"owner": 7}, "owner"),
    ({"owner": "game-server\x1b[2J"}, "owner"),
])
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(as_admin, integration, body, field):
    before = AuditEvent.objects.count()
    response = as_admin.post(TOKENS, {**OWNER, **body}, format="json")
    if field is None:
        assert response.status_code == 201, response.content
        return
    assert_names_field(response, 400, field)
    assert nothing_written(integration) and AuditEvent.objects.count() == before


@pytest.mark.parametrize("body", [
    {"scopes": ["read", "read", "bets", "read"]},
    {"allowed_ips": ["10.0.0.7/8", "10.0.0.0/8", " 10.1.2.3/8 "]},
])
def test_duplicates_are_kept_once(as_admin, integration, body):
    response = as_admin.post(TOKENS, {**OWNER, **body}, format="json")
    assert response.status_code == 201, response.content
    token = ApiToken.objects.get(owner=integration)
    assert token.scopes in (["read", "bets"], ["read"]) and token.allowed_ips in ([], ["10.0.0.0/8"])


def test_a_time_without_a_zone_is_read_in_the_site_s_zone(as_admin, integration):
    response = as_admin.post(TOKENS, {**OWNER, "expires_at": "2100-01-01T00:00:00"}, format="json")
    assert response.status_code == 201, response.content
    assert ApiToken.objects.get(owner=integration).expires_at.year == 2100


@pytest.mark.parametrize(("body", "status"), [
    ("[" * 10000 + "]" * 10000, 400),
    ('{"owner": ' + "[" * 10000 + "]" * 10000 + "}", 400),
    ('{"owner": "game-server", "label": "a\\u0000b"}', 400),
    ('{"owner": "game-server", "label": "\\ud800"}', 400),
    ('{"owner": "game-server", "scopes": ["\\udfff"]}', 400),
    ('{"owner": "game-server", "label": NaN}', 400),
    ('{"owner": "game-server",', 400),
    ("null", 400),
    ("[]", 400),
    ('"game-server"', 400),
    ("12", 400),
])
def test_malformed_json_is_a_json_400(as_admin, integration, body, status):
    response = as_admin.generic("POST", TOKENS, body, content_type="application/json")
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json") and response.json()
    assert nothing_written(integration)


def test_a_huge_body_is_a_json_413(as_admin, integration, settings):
    body = json.dumps({**OWNER, "label": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})
    response = as_admin.generic("POST", TOKENS, body, content_type="application/json")
    assert response.status_code == 413 and response.json()
    assert nothing_written(integration)


@pytest.mark.parametrize(("content_type", "body"), [
    ("application/x-www-form-urlencoded", "owner=game-server&scopes=write"),
    ("multipart/form-data; boundary=x",
     '--x\r\nContent-Disposition: form-data; name="owner"\r\n\r\ngame-server\r\n--x--'),
    ("text/plain", '{"owner": "game-server"}'),
    ("application/xml", "<owner>game-server</owner>"),
    ("", '{"owner": "game-server"}'),
])
def test_a_body_that_is_not_json_is_a_json_415(as_admin, integration, content_type, body):
    response = as_admin.generic("POST", TOKENS, body, content_type=content_type)
    assert response.status_code == 415, response.content
    assert "detail" in response.json() and nothing_written(integration)


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "TRACE", "PROPFIND"])
@pytest.mark.parametrize("path", ["", "1/rotate/", "1/revoke/"])
def test_other_methods_are_a_json_405(as_admin, integration, method, path):
    token = ApiToken.objects.create(owner=integration, digest="d" * 64, prefix="bo_x", scopes=["read"])
    response = as_admin.generic(method, TOKENS + path.replace("1/", f"{token.pk}/"), "{}",
                                content_type="application/json")
    assert response.status_code == 405, response.content
    assert "detail" in response.json()
    token.refresh_from_db()
    assert token.enabled


@pytest.mark.parametrize("path", ["0/rotate/", "-1/rotate/", "99999999999999999999/rotate/", "1.5/revoke/",
                                  "%00/revoke/", "١/revoke/", "1/", "abc/"])
def test_ids_that_are_none_are_a_json_404(as_admin, path):
    response = as_admin.post(f"{TOKENS}{path}", {}, format="json")
    assert response.status_code == 404 and response.json()


@pytest.mark.parametrize(("body", "field"), [
    ({"overlap_hours": 10**400}, "overlap_hours"),
    ('{"overlap_hours": 1e400}', "overlap_hours"),
    ('{"overlap_hours": 1e-400}', "overlap_hours"),
    ('{"overlap_hours": 0.0001}', "overlap_hours"),
    ({"overlap_hours": 2.5, "enabled": False}, "enabled"),
    ({"overlap_hours": "1e400"}, "overlap_hours"),
    ({"overlap_hours": "nan"}, "overlap_hours"),
    ({"overlap_hours": "inf"}, "overlap_hours"),
    ({"overlap_hours": "-inf"}, "overlap_hours"),
    ({"overlap_hours": -1}, "overlap_hours"),
    ({"overlap_hours": 721}, "overlap_hours"),
    ({"overlap_hours": True}, "overlap_hours"),
    ({"overlap_hours": "12\x00"}, "overlap_hours"),
    ({"overlap_hours": "١٢"}, "overlap_hours"),
    ({"overlap_hours": [1]}, "overlap_hours"),
])
def test_a_bad_overlap_is_a_400_and_rotates_nothing(as_admin, integration, body, field):
    response = as_admin.post(TOKENS, OWNER, format="json")
    token_id = response.json()["api_token"]["id"]
    before = ApiToken.objects.count()
    body = body if isinstance(body, str) else json.dumps(body)
    response = as_admin.generic("POST", f"{TOKENS}{token_id}/rotate/", body, content_type="application/json")
    assert_names_field(response, 400, field)
    assert ApiToken.objects.count() == before and ApiToken.objects.get(pk=token_id).expires_at is None


@pytest.mark.parametrize("value", [0, 1, "2", 0.5, "1.25", 720])
def test_an_overlap_in_range_is_taken_as_a_number(as_admin, integration, value):
    token_id = as_admin.post(TOKENS, OWNER, format="json").json()["api_token"]["id"]
    response = as_admin.post(f"{TOKENS}{token_id}/rotate/", {"overlap_hours": value}, format="json")
    assert response.status_code == 201, response.content


def test_the_list_names_a_bad_owner_filter(as_admin):
    for query, field in [({"owner": "x\x00"}, "owner"), ({"owner": "x" * 151}, "owner"),
                         ({"owner": "nobody-here"}, "owner")]:
        assert_names_field(as_admin.get(TOKENS, query), 400, field)


def test_no_answer_but_the_making_one_holds_a_token(as_admin, integration):
    made = as_admin.post(TOKENS, OWNER, format="json").json()
    secret, token_id = made["token"], made["api_token"]["id"]
    answers = [as_admin.get(TOKENS), as_admin.get(TOKENS, {"owner": "game-server"}),
               as_admin.options(TOKENS), as_admin.post(f"{TOKENS}{token_id}/revoke/"),
               as_admin.post(f"{TOKENS}{token_id}/rotate/", {}, format="json"),
               as_admin.get(f"{API}/auth-events/")]
    for answer in answers:
        assert secret not in answer.content.decode() and secret[3:20] not in answer.content.decode()
    for event in AuditEvent.objects.all():
        assert secret[3:20] not in json.dumps([event.before, event.after, event.reason], default=str)


def test_an_anonymous_caller_is_a_json_401(integration):
    response = APIClient().post(TOKENS, OWNER, format="json")
    assert response.status_code == 401 and "detail" in response.json()
    assert nothing_written(integration)


def test_a_token_is_rotated_once_its_successor_next(as_admin, integration):
    token_id = as_admin.post(TOKENS, OWNER, format="json").json()["api_token"]["id"]
    first = as_admin.post(f"{TOKENS}{token_id}/rotate/", {}, format="json")
    assert first.status_code == 201
    successor = first.json()["api_token"]["id"]
    again = as_admin.post(f"{TOKENS}{token_id}/rotate/", {}, format="json")
    assert_names_field(again, 409, "token")
    assert f"#{successor}" in again.json()["token"][0]
    assert ApiToken.objects.filter(owner=integration).count() == 2
    assert as_admin.post(f"{TOKENS}{successor}/rotate/", {}, format="json").status_code == 201


def test_the_database_keeps_one_successor_a_token(integration):
    from django.db import IntegrityError, transaction

    old = ApiToken.objects.create(owner=integration, digest="a" * 64, prefix="bo_a", scopes=["read"])
    ApiToken.objects.create(owner=integration, digest="b" * 64, prefix="bo_b", scopes=["read"], rotated_from=old)
    with pytest.raises(IntegrityError), transaction.atomic():
        ApiToken.objects.create(owner=integration, digest="c" * 64, prefix="bo_c", scopes=["read"], rotated_from=old)


def test_the_database_refuses_a_misleading_label(integration):
    from django.db import IntegrityError, transaction

    for label in ("a\tb", "x\u202ey", "\x9b31m"):
        with pytest.raises(IntegrityError), transaction.atomic():
            ApiToken.objects.create(owner=integration, digest="a" * 64, prefix="bo_a", scopes=["read"], label=label)
    ApiToken.objects.create(owner=integration, digest="a" * 64, prefix="bo_a", scopes=["read"], label="Tisch \u00fc")


@pytest.mark.parametrize(("allowed", "address", "accepted"), [
    (["2001:db8::/64"], "2001:db8::7", True),
    (["2001:db8::/64"], "[2001:db8::7]:443", True),
    (["198.51.100.0/24"], "::ffff:198.51.100.7", True),  # a mapped address is its IPv4 address
    (["198.51.100.0/24"], "198.51.101.7", False),
])
def test_a_token_limited_to_addresses(api_as, integration, allowed, address, accepted):
    client = api_as(integration, scopes=["read"], allowed_ips=allowed)
    response = client.get(f"{API}/games/", REMOTE_ADDR=address)
    assert response.status_code == (200 if accepted else 401), response.content


class TestTheAdminAndTheCommand:
    def test_the_admin_form_refuses_what_the_api_refuses(self, administrator, integration):
        from django.test import Client
        from django.urls import reverse

        from tests.conftest import verified_login

        client = verified_login(Client(), administrator)
        add = reverse("admin:apitokens_apitoken_add")
        for label, ips, field in [("a\u202eb", "", "label"), ("tab\there", "", "label"),
                                  ("ok", "fe80::1%eth0", "allowed_ips"), ("ok", "::ffff:10.0.0.1", "allowed_ips")]:
            response = client.post(add, {"owner": integration.pk, "label": label, "scopes": ["read"],
                                         "allowed_ips": ips})
            assert response.status_code == 200 and field in response.context["adminform"].form.errors, field
        assert nothing_written(integration)

    def test_rotating_twice_is_refused_by_the_admin_action_and_the_command(self, administrator, integration):
        from django.core.management import CommandError, call_command
        from django.test import Client
        from django.urls import reverse

        from apitokens import services
        from tests.conftest import verified_login

        token, _secret = services.token_create(owner=integration, actor="system:tests")
        services.token_rotate(token_id=token.pk, actor="system:tests")
        client = verified_login(Client(), administrator)
        response = client.post(reverse("admin:apitokens_apitoken_changelist"),
                               {"action": "rotate", "_selected_action": [token.pk]}, follow=True)
        assert response.status_code == 200 and "already rotated" in response.content.decode()
        with pytest.raises(CommandError, match="already rotated"):
            call_command("api_token", "rotate", str(token.pk))
        assert ApiToken.objects.filter(owner=integration).count() == 2
