"""Abuse limits: API throttling per token at its role's rate, and the admin's lock-out after
repeated failed log-ins."""

import pytest
from django.core.cache import cache
from django.test import Client

from audit.models import AuditEvent
from backoffice.api import throttling
from backoffice.api.throttling import parse_rate
from tests.api.helpers import API

pytestmark = pytest.mark.django_db


FROZEN_NOW = 1_800_000_030.0  # half a minute into a window, so no test crosses into the next


@pytest.fixture
def frozen_clock(monkeypatch):
    monkeypatch.setattr(throttling.time, "time", lambda: FROZEN_NOW)


@pytest.fixture
def tight_rates(settings, frozen_clock):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "operator": "3/minute", "support": "5/minute",
                                   "anonymous": "2/minute", "integration": "50000/second"}


@pytest.fixture
def batched_rates(settings, frozen_clock):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "integration": "20/minute"}
    settings.API_THROTTLE_BATCH_FROM, settings.API_THROTTLE_BATCH = 10, 8


def window_key(user) -> str:
    return f"throttle:user:{user.pk}:60:{int(FROZEN_NOW // 60)}"


class TestThrottling:
    def test_a_person_over_their_role_rate_gets_a_json_429_with_retry_after(self, as_operator, tight_rates):
        statuses = [as_operator.get(f"{API}/games/").status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        response = as_operator.get(f"{API}/games/")
        assert response.status_code == 429 and response["Content-Type"].startswith("application/json")
        assert "throttled" in response.json()["detail"]
        assert 1 <= int(response["Retry-After"]) <= 60

    def test_each_token_and_role_counts_alone(self, as_operator, as_support, tight_rates):
        for _ in range(3):
            as_operator.get(f"{API}/games/")
        assert as_operator.get(f"{API}/games/").status_code == 429
        assert [as_support.get(f"{API}/games/").status_code for _ in range(5)] == [200] * 5
        assert as_support.get(f"{API}/games/").status_code == 429

    def test_anonymous_requests_count_by_address(self, api_as, tight_rates):
        anonymous = api_as(None)  # the schema is public (the rest of the API answers them 401)
        assert [anonymous.get("/api/schema/").status_code for _ in range(3)] == [200, 200, 429]

    def test_a_game_server_is_not_held_back_at_its_peak(self, as_integration, game, tight_rates):
        assert all(as_integration.get(f"{API}/games/").status_code == 200 for _ in range(300))

    @pytest.mark.services
    def test_on_redis_a_request_is_counted_in_one_round_trip(self, redis_cache, redis_commands, as_operator,
                                                             frozen_clock, settings):
        settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "operator": "3/minute"}
        statuses = []
        for _ in range(4):
            redis_commands.clear()
            statuses.append(as_operator.get(f"{API}/games/").status_code)
            if len(statuses) > 1:
                assert redis_commands == ["EVALSHA"], redis_commands  # the window has begun: one increment
        assert statuses == [200, 200, 200, 429]

    def test_a_game_server_s_requests_reach_the_shared_count_a_batch_at_a_time(
            self, as_integration, integration, game, batched_rates):
        statuses = [as_integration.get(f"{API}/games/").status_code for _ in range(10)]
        assert statuses == [200] * 10
        # The first request read the shared total; the next eight were added together; the tenth waits.
        assert cache.get(window_key(integration)) == 9

    def test_one_process_refuses_at_the_limit_exactly(self, as_integration, game, batched_rates):
        statuses = [as_integration.get(f"{API}/games/").status_code for _ in range(22)]
        assert statuses == [200] * 20 + [429] * 2

    def test_other_processes_counts_are_read_at_each_batch(self, as_integration, integration, game,
                                                          batched_rates):
        assert as_integration.get(f"{API}/games/").status_code == 200
        cache.incr(window_key(integration), 30)  # other web processes' batches
        statuses = [as_integration.get(f"{API}/games/").status_code for _ in range(10)]
        # Seven more pass on this process's own count (at most a batch beyond the limit), then the
        # batch's round trip reads 39 and every later request is refused.
        assert statuses == [200] * 7 + [429] * 3

    def test_the_default_rates(self, settings):
        rates = settings.API_THROTTLE_RATES
        assert parse_rate(rates["integration"])[0] / parse_rate(rates["integration"])[1] >= 10_000
        for role in ("operator", "support", "admin"):
            count, period = parse_rate(rates[role])
            assert count / period <= 100

    @pytest.mark.parametrize("rate,parsed", [("none", None), ("600/minute", (600, 60)), ("5/second", (5, 1))])
    def test_rates_read_from_settings(self, rate, parsed):
        assert parse_rate(rate) == parsed


def log_in(client, password="wrong-password", username="olivia-operator"):
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password})


class TestLockout:
    def test_repeated_failures_lock_the_user_name_even_with_the_right_password(self, operator, settings):
        settings.LOGIN_FAILURE_LIMIT = 3
        client = Client()
        for _ in range(3):
            assert log_in(client).status_code == 200  # the form again, with an error
        response = log_in(client, password="correct-horse-battery")
        assert response.status_code == 200
        assert "locked" in response.content.decode()
        assert "_auth_user_id" not in client.session
        events = AuditEvent.objects.filter(action="auth.locked_out")
        assert [(event.object_type, event.object_id) for event in events] == [("user", "olivia-operator")]
        dump = repr(list(AuditEvent.objects.values()))
        assert "wrong-password" not in dump and "correct-horse-battery" not in dump
        assert AuditEvent.objects.filter(action="auth.login_failed").count() == 4

    def test_a_success_before_the_limit_clears_the_count(self, operator, settings):
        settings.LOGIN_FAILURE_LIMIT = 3
        client = Client()
        log_in(client)
        log_in(client)
        assert log_in(client, password="correct-horse-battery").status_code == 302
        Client().logout()
        other = Client()
        log_in(other)
        log_in(other)
        assert log_in(other, password="correct-horse-battery").status_code == 302

    def test_the_lock_is_per_user_name(self, operator, support, settings):
        settings.LOGIN_FAILURE_LIMIT = 2
        client = Client()
        log_in(client)
        log_in(client)
        assert log_in(Client(), password="correct-horse-battery", username="sam-support").status_code == 302

    def test_the_lock_ends_after_its_time(self, operator, settings):
        from django.core.cache import cache

        settings.LOGIN_FAILURE_LIMIT = 2
        client = Client()
        log_in(client)
        log_in(client)
        assert log_in(client, password="correct-horse-battery").status_code == 200
        cache.clear()  # the lock-out's time has passed
        assert log_in(client, password="correct-horse-battery").status_code == 302
