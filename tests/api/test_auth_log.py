"""The authentication log: every admin log-in (success, wrong password, unknown or inactive name,
lock-out, refused while locked), every refused API token and every token made or deleted is an
audit event with the user name, outcome, address and user agent, never a password or a token;
read through ``GET /api/v1/auth-events/`` by administrators and regulators."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apitokens.models import ApiToken
from apitokens.services import token_create, token_revoke, token_rotate
from audit.models import AuditEvent
from baccarat_site import receivers
from tests.api.helpers import API
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery"  # tests.conftest.make_user's
AGENT = "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"
ADDRESS = "198.51.100.24"
AUTH_EVENTS = f"{API}/auth-events/"


def log_in(username="olivia-operator", password="wrong-password", address=ADDRESS):
    client = Client(REMOTE_ADDR=address, HTTP_USER_AGENT=AGENT)
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password})


def auth_events(action=None) -> list[AuditEvent]:
    events = AuditEvent.objects.filter(action__startswith="auth.").order_by("id")
    return list(events.filter(action=action) if action else events)


def shown(event) -> tuple:
    return (event.action, event.after["outcome"], event.after["username"], event.source_ip,
            event.after["user_agent"])


@pytest.fixture(autouse=True)
def still_clock(monkeypatch):
    """Half a minute into a minute: no test crosses into the next one of the flood limit."""
    monkeypatch.setattr(receivers, "clock", lambda: 1_800_000_030.0, raising=False)


def dump() -> str:
    """Every column of every audit event, as text."""
    return repr(list(AuditEvent.objects.values()))


class TestAdminLogIns:
    def test_a_successful_log_in_is_recorded_with_its_address_and_user_agent(self, operator):
        assert log_in(password=PASSWORD).status_code == 302
        [event] = auth_events("auth.logged_in")
        assert shown(event) == ("auth.logged_in", "succeeded", "olivia-operator", ADDRESS, AGENT)
        assert (event.actor_user, event.object_type, event.object_id) == (operator, "user", "olivia-operator")
        assert PASSWORD not in dump()

    @pytest.mark.parametrize(("username", "outcome"), [("olivia-operator", "wrong_password"),
                                                       ("mallory", "unknown_user"),
                                                       ("sam-support", "inactive_user")])
    def test_a_failed_log_in_names_why(self, operator, support, username, outcome):
        support.is_active = False
        support.save()
        password = PASSWORD if outcome == "inactive_user" else "guess-123"
        assert log_in(username, password).status_code == 200
        [event] = auth_events("auth.login_failed")
        assert shown(event) == ("auth.login_failed", outcome, username, ADDRESS, AGENT)
        assert event.actor == "anonymous" and event.actor_user is None
        assert password not in dump()

    def test_an_api_client_s_right_password_is_refused_and_recorded(self, integration):
        response = log_in(integration.username, PASSWORD)
        assert response.status_code == 200 and "_auth_user_id" not in response.client.session
        [event] = auth_events("auth.login_failed")
        assert shown(event) == ("auth.login_failed", "not_staff", integration.username, ADDRESS, AGENT)
        assert PASSWORD not in dump()

    def test_a_lock_out_and_the_attempts_it_refuses_are_recorded(self, operator, settings):
        settings.LOGIN_FAILURE_LIMIT = 2
        log_in()
        log_in()
        assert "locked" in log_in(password=PASSWORD).content.decode()
        assert [shown(event)[:2] for event in auth_events()] == [
            ("auth.login_failed", "wrong_password"), ("auth.login_failed", "wrong_password"),
            ("auth.locked_out", "locked_out"), ("auth.login_failed", "refused_locked")]
        locked = auth_events("auth.locked_out")[0]
        assert shown(locked) == ("auth.locked_out", "locked_out", "olivia-operator", ADDRESS, AGENT)
        assert locked.after["address"] == ADDRESS
        assert "wrong-password" not in dump() and PASSWORD not in dump()

    def test_a_slow_down_and_the_attempts_it_refuses_are_recorded(self, operator, settings):
        settings.LOGIN_SLOWDOWN_AFTER, settings.LOGIN_SLOWDOWN_SECONDS = 2, 30
        log_in(address="198.51.100.1")
        log_in(address="198.51.100.2")
        log_in(address="198.51.100.3")  # the one check of the slot
        log_in(address="198.51.100.4", password=PASSWORD)  # refused unchecked
        assert [shown(event)[1] for event in auth_events()] == [
            "wrong_password", "wrong_password", "slowed", "wrong_password", "refused_slowed"]

    def test_a_flood_of_failures_from_one_address_is_recorded_up_to_the_limit(self, operator, settings):
        settings.AUTH_LOG_FAILURES_PER_MINUTE, settings.LOGIN_FAILURE_LIMIT = 3, 100
        for _ in range(5):
            log_in()
        events = auth_events("auth.login_failed")
        assert len(events) == 3 and "not_recorded" in events[-1].after
        log_in(address="198.51.100.25")  # another address counts alone
        assert len(auth_events("auth.login_failed")) == 4


class TestApiTokens:
    def client(self, authorization, address=ADDRESS) -> APIClient:
        client = APIClient(REMOTE_ADDR=address, HTTP_USER_AGENT=AGENT)
        client.credentials(HTTP_AUTHORIZATION=authorization)
        return client

    def test_an_unknown_token_is_recorded_with_the_address_and_user_agent_never_the_token(self, api_as, support):
        accepted = api_as(support)
        before = AuditEvent.objects.count()
        assert accepted.get(f"{API}/games/").status_code == 200
        assert AuditEvent.objects.count() == before  # an accepted token records nothing
        guess = "5f" * 20
        assert self.client(f"Token {guess}").get(f"{API}/games/").status_code == 401
        [event] = auth_events("auth.token_refused")
        assert shown(event) == ("auth.token_refused", "unknown_token", "", ADDRESS, AGENT)
        assert guess not in dump() and guess[:16] not in dump()

    def test_a_refused_token_on_the_short_way_of_a_bet_is_recorded_once(self, open_round):
        body = {"account": "player-1", "bet_type": "BANKER", "stake": "10.00", "idempotency_key": "k"}
        response = self.client("Token " + "0" * 40).post(f"{API}/rounds/{open_round.pk}/bets/", body, format="json")
        assert response.status_code == 401
        assert [shown(event)[:2] for event in auth_events()] == [("auth.token_refused", "unknown_token")]

    def test_an_inactive_user_s_token_is_recorded_with_the_name(self, support):
        token, key = token_create(owner=support, actor="system:tests")
        support.is_active = False
        support.save()
        assert self.client(f"Token {key}").get(f"{API}/games/").status_code == 401
        [event] = auth_events("auth.token_refused")
        assert shown(event) == ("auth.token_refused", "inactive_user", "sam-support", ADDRESS, AGENT)
        assert event.after["token_id"] == token.pk
        assert key not in dump() and key[3:16] not in dump() and token.prefix not in dump()

    @pytest.mark.parametrize(("outcome", "change", "status"), [
        ("disabled_token", lambda token: token_revoke(token_id=token.pk, actor="system:tests"), 401),
        ("expired_token", lambda token: ApiToken.objects.filter(pk=token.pk).update(
            expires_at=timezone.now() - timedelta(seconds=1)), 401),
        ("wrong_address", lambda token: ApiToken.objects.filter(pk=token.pk).update(
            allowed_ips=["2001:db8::/32", "198.51.100.0/30"]), 401),
        ("wrong_scope", lambda token: ApiToken.objects.filter(pk=token.pk).update(scopes=["bets"]), 403),
    ])
    def test_each_refusal_of_a_known_token_is_recorded_with_its_owner_and_id(self, operator, outcome, change, status):
        token, key = token_create(owner=operator, actor="system:tests", scopes=["write"],
                                  allowed_ips=["198.51.100.0/24"])
        assert self.client(f"Token {key}").get(f"{API}/games/").status_code == 200
        change(token)
        assert self.client(f"Token {key}").get(f"{API}/games/").status_code == status
        [event] = auth_events("auth.token_refused")
        assert shown(event) == ("auth.token_refused", outcome, "olivia-operator", ADDRESS, AGENT)
        assert event.after["token_id"] == token.pk
        assert key not in dump() and key[3:16] not in dump() and token.prefix not in dump()

    def test_a_malformed_header_is_recorded(self):
        assert self.client("Token two words").get(f"{API}/games/").status_code == 401
        assert [shown(event)[:2] for event in auth_events()] == [("auth.token_refused", "malformed_token")]
        assert "two words" not in dump()

    def test_a_flood_of_refused_tokens_is_recorded_up_to_the_limit(self, settings):
        settings.AUTH_LOG_FAILURES_PER_MINUTE = 3
        assert [self.client("Token " + "0" * 40).get(f"{API}/games/").status_code for _ in range(5)] == [401] * 5
        events = auth_events("auth.token_refused")
        assert len(events) == 3 and "not_recorded" in events[-1].after

    def test_tokens_made_rotated_revoked_and_deleted_are_recorded_never_the_token(self, support):
        token, key = token_create(owner=support, actor="system:tests")
        rotated, new_key = token_rotate(token_id=token.pk, actor="system:tests")
        token_revoke(token_id=rotated.pk, actor="system:tests")
        ApiToken.objects.get(pk=token.pk).delete()
        events = auth_events()
        assert [shown(event)[:3] for event in events] == [
            ("auth.token_created", "token_created", "sam-support"),
            ("auth.token_rotated", "token_rotated", "sam-support"),
            ("auth.token_revoked", "token_revoked", "sam-support"),
            ("auth.token_deleted", "token_deleted", "sam-support")]
        assert (events[1].after["token_id"], events[1].after["rotated_token_id"]) == (rotated.pk, token.pk)
        for secret, row in ((key, token), (new_key, rotated)):
            assert secret not in dump() and secret[3:16] not in dump() and row.prefix not in dump()

    def test_create_staff_user_s_token_is_recorded_never_the_token(self):
        out = StringIO()
        call_command("create_staff_user", "tess-table", "--role", "integration", "--password", "Pass-word-9",
                     stdout=out)
        key = out.getvalue().splitlines()[-1]
        [event] = auth_events("auth.token_created")
        assert (event.actor, event.after["username"]) == ("system:create_staff_user", "tess-table")
        assert key not in dump() and key[3:16] not in dump() and "Pass-word-9" not in dump()

    def test_the_api_token_command_records_what_it_does(self, support):
        out = StringIO()
        call_command("api_token", "create", "sam-support", stdout=out)
        key = out.getvalue().splitlines()[-1]
        token = ApiToken.objects.get(owner=support)
        call_command("api_token", "revoke", str(token.pk), stdout=StringIO())
        assert [(event.action, event.actor) for event in auth_events()] == [
            ("auth.token_created", "system:api_token"), ("auth.token_revoked", "system:api_token")]
        assert key not in dump() and token.prefix not in dump()


class TestAuthEventsApi:
    @pytest.fixture
    def recorded(self, operator, support):
        log_in(password=PASSWORD)
        log_in()
        log_in("sam-support", address="198.51.100.99")
        APIClient(REMOTE_ADDR=ADDRESS).get(f"{API}/games/", HTTP_AUTHORIZATION="Token " + "1" * 40)
        return auth_events()

    def test_administrators_and_regulators_read_it_support_and_operators_do_not(self, api_as, administrator,
                                                                                regulator, operator, support,
                                                                                recorded):
        for user in (administrator, regulator):
            assert api_as(user).get(AUTH_EVENTS).status_code == 200
        for user in (operator, support):
            response = api_as(user).get(AUTH_EVENTS)
            assert response.status_code == 403 and "audit.view_authevent" in response.json()["detail"]
        assert api_as(None).get(AUTH_EVENTS).status_code == 401

    def test_newest_first_with_what_was_recorded(self, api_as, administrator, recorded):
        results = api_as(administrator).get(AUTH_EVENTS).json()["results"]
        expected = [event.pk for event in reversed(recorded)]
        assert [result["id"] for result in results][-len(expected):] == expected
        newest = next(result for result in results if result["id"] == recorded[-1].pk)
        assert set(newest) == {"id", "created_at", "action", "outcome", "username", "actor", "source_ip",
                               "user_agent", "request_id", "leaf_index"}
        assert (newest["action"], newest["outcome"], newest["username"], newest["source_ip"]) == (
            "auth.token_refused", "unknown_token", "", ADDRESS)
        failed = next(result for result in results if result["id"] == recorded[1].pk)
        assert (failed["action"], failed["outcome"], failed["username"], failed["user_agent"], failed["source_ip"]) == (
            "auth.login_failed", "wrong_password", "olivia-operator", AGENT, ADDRESS)

    def test_filters(self, api_as, administrator, recorded):
        client = api_as(administrator)

        def ids(**query):
            response = client.get(AUTH_EVENTS, query)
            assert response.status_code == 200, response.content
            return [result["id"] for result in response.json()["results"]]

        by_name = {event.pk for event in recorded if event.after["username"] == "sam-support"}
        assert set(ids(username="sam-support")) == by_name and by_name
        assert ids(outcome="succeeded") == [recorded[0].pk]
        assert ids(outcome="unknown_token") == [recorded[-1].pk]
        assert ids(username="olivia-operator", outcome="wrong_password") == [recorded[1].pk]
        assert ids(since=(timezone.now() + timedelta(minutes=1)).isoformat()) == []
        assert recorded[-1].pk in ids(since=(timezone.now() - timedelta(minutes=1)).isoformat())
        assert ids(username="nobody-at-all") == []

    def test_bad_filters_are_400(self, api_as, administrator):
        client = api_as(administrator)
        for query in ({"outcome": "maybe"}, {"since": "yesterday"}, {"username": ""}, {"username": "x" * 151}):
            response = client.get(AUTH_EVENTS, query)
            assert response.status_code == 400 and set(response.json()) == set(query), query

    def test_cursor_pages(self, api_as, administrator, recorded):
        client = api_as(administrator)
        first = client.get(AUTH_EVENTS, {"page_size": 2}).json()
        second = client.get(first["next"]).json()
        ids = [result["id"] for result in first["results"] + second["results"]]
        assert ids == sorted(ids, reverse=True) and len(set(ids)) == 4


def test_only_auth_events_are_listed(api_as, administrator, operator):
    make_user("someone", None)  # staff.created: not an authentication event
    log_in()
    actions = {result["action"] for result in api_as(administrator).get(AUTH_EVENTS).json()["results"]}
    assert actions and all(action.startswith("auth.") for action in actions)
