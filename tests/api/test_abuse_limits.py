"""Abuse limits: API throttling per token at its role's rate (per client address without one), and
the admin's lock-outs after repeated failed log-ins (per user name and address)."""

import pytest
from django.core.cache import cache
from django.test import Client

from audit.models import AuditEvent
from backoffice import lockout
from backoffice.api import throttling
from backoffice.api.throttling import parse_rate
from tests.api.helpers import API
from tests.conftest import verified_login

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

    def test_a_new_forwarded_address_per_request_does_not_escape_the_anonymous_rate(self, api_as, tight_rates):
        anonymous = api_as(None)  # no proxy configured: X-Forwarded-For is the client's own claim
        statuses = [anonymous.get("/api/schema/", HTTP_X_FORWARDED_FOR=f"198.51.100.{number}").status_code
                    for number in range(4)]
        assert statuses == [200, 200, 429, 429]

    def test_behind_a_trusted_proxy_each_client_counts_alone(self, api_as, tight_rates, settings):
        settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
        anonymous = api_as(None)

        def get(client_claim):
            return anonymous.get("/api/schema/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=client_claim).status_code

        # What a client writes left of what the proxy appended changes nothing.
        assert [get(f"192.0.2.{number}, 198.51.100.7") for number in range(3)] == [200, 200, 429]
        assert [get("198.51.100.8") for _ in range(3)] == [200, 200, 429]
        # A client reaching the app around the proxy is counted by its own address.
        direct = [anonymous.get("/api/schema/", REMOTE_ADDR="203.0.113.1", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
                  .status_code for n in range(10, 13)]
        assert direct == [200, 200, 429]

    def test_an_ipv6_client_counts_by_its_64(self, api_as, tight_rates):
        anonymous = api_as(None)
        statuses = [anonymous.get("/api/schema/", REMOTE_ADDR=f"2001:db8:1:2::{number:x}").status_code
                    for number in range(1, 4)]
        assert statuses == [200, 200, 429]
        assert anonymous.get("/api/schema/", REMOTE_ADDR="2001:db8:1:3::1").status_code == 200

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


def log_in(client, password="wrong-password", username="olivia-operator", **extra):
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password}, **extra)


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


def from_address(address, **extra) -> Client:
    return Client(REMOTE_ADDR=address, **extra)


class TestLockoutPerAddress:
    """Lock-outs by user name and source address; the name alone is only slowed down."""

    def test_failures_from_one_address_do_not_lock_the_name_from_another(self, operator):
        guesser = from_address("198.51.100.66")
        for _ in range(5):  # LOGIN_FAILURE_LIMIT's default
            assert log_in(guesser).status_code == 200
        assert "locked" in log_in(guesser, password="correct-horse-battery").content.decode()
        assert log_in(from_address("192.0.2.10"), password="correct-horse-battery").status_code == 302

    @pytest.mark.services
    def test_on_redis_too(self, redis_cache, operator, administrator, settings):
        settings.LOGIN_SLOWDOWN_AFTER = 6
        for _ in range(5):
            log_in(from_address("198.51.100.66"))
        assert "locked" in log_in(from_address("198.51.100.66"), password="correct-horse-battery").content.decode()
        log_in(from_address("198.51.100.67"))  # the sixth failure of the name: slowed from new addresses
        assert lockout.is_slowed("olivia-operator")
        assert log_in(from_address("192.0.2.10"), password="correct-horse-battery").status_code == 302
        lockout.unlock("olivia-operator", by=administrator)
        assert log_in(from_address("198.51.100.66"), password="correct-horse-battery").status_code == 302

    def test_a_guesser_cycling_forwarded_addresses_stays_locked(self, operator):
        guesser = from_address("198.51.100.66")  # no proxy configured: the header is its own claim
        for number in range(5):
            log_in(guesser, HTTP_X_FORWARDED_FOR=f"203.0.113.{number}")
        response = log_in(guesser, password="correct-horse-battery", HTTP_X_FORWARDED_FOR="203.0.113.99")
        assert "locked" in response.content.decode() and "_auth_user_id" not in guesser.session

    def test_an_ipv6_guesser_cycling_its_64_stays_locked(self, operator):
        for number in range(1, 6):
            log_in(from_address(f"2001:db8:1:2::{number:x}"))
        response = log_in(from_address("2001:db8:1:2::99"), password="correct-horse-battery")
        assert "locked" in response.content.decode()
        assert log_in(from_address("2001:db8:1:3::1"), password="correct-horse-battery").status_code == 302

    def test_behind_a_trusted_proxy_the_client_is_locked_not_the_proxy(self, operator, settings):
        settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
        guesser = from_address("10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.66")
        for _ in range(5):
            log_in(guesser)
        assert "locked" in log_in(guesser, password="correct-horse-battery").content.decode()
        owner = from_address("10.0.0.2", HTTP_X_FORWARDED_FOR="192.0.2.10")
        assert log_in(owner, password="correct-horse-battery").status_code == 302

    def test_each_lock_out_is_recorded_with_its_address(self, operator, settings):
        settings.TRUSTED_PROXIES, settings.LOGIN_SLOWDOWN_AFTER = ["10.0.0.0/8"], 20
        guesser = from_address("10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.66")
        for _ in range(7):
            log_in(guesser)
        other = from_address("198.51.100.67")
        for _ in range(5):
            log_in(other)
        events = AuditEvent.objects.filter(action="auth.locked_out").order_by("id")
        assert [(event.object_id, event.source_ip, event.after["address"]) for event in events] == [
            ("olivia-operator", "198.51.100.66", "198.51.100.66"),
            ("olivia-operator", "198.51.100.67", "198.51.100.67")]
        assert events[0].after["seconds"] == settings.LOGIN_LOCKOUT_SECONDS

    def test_failures_from_many_addresses_slow_the_name_down_without_locking_its_owner_out(self, operator,
                                                                                           settings):
        settings.LOGIN_SLOWDOWN_AFTER, settings.LOGIN_SLOWDOWN_SECONDS = 4, 30
        office = from_address("192.0.2.10")
        assert log_in(office, password="correct-horse-battery").status_code == 302  # a known address
        for number in range(4):  # a guesser rotating addresses, under each address's limit
            log_in(from_address(f"198.51.100.{number}"))
        slowed = AuditEvent.objects.filter(action="auth.locked_out")
        assert [event.after.get("slowed") is not None for event in slowed] == [True]
        # From a new address the password is checked once in LOGIN_SLOWDOWN_SECONDS ...
        assert log_in(from_address("198.51.100.50")).status_code == 200
        refused = log_in(from_address("198.51.100.51"), password="correct-horse-battery")
        assert refused.status_code == 200 and "once every 30 seconds" in refused.content.decode()
        # ... and a refused attempt checked nothing, so it counts towards no lock-out.
        assert lockout.failures("olivia-operator", "198.51.100.51") == 0
        # Its owner, from where they have logged in before, is not slowed at all.
        assert log_in(from_address("192.0.2.10"), password="correct-horse-battery").status_code == 302
        # Once the slot is free again, the owner gets in from a new address too.
        cache.delete(lockout._Keys("olivia-operator", None).slot)
        assert log_in(from_address("203.0.113.80"), password="correct-horse-battery").status_code == 302


class TestUnlock:
    def unlock(self, client, *users):
        return client.post("/admin/auth/user/", {"action": "unlock_log_ins",
                                                 "_selected_action": [user.pk for user in users]})

    def test_an_administrator_unlocks_every_lock_out_of_a_name(self, operator, administrator, settings):
        settings.LOGIN_SLOWDOWN_AFTER = 6
        for address in ("198.51.100.1", "198.51.100.2"):
            for _ in range(5):
                log_in(from_address(address))
        assert lockout.is_locked("olivia-operator", "198.51.100.1") and lockout.is_slowed("olivia-operator")
        admin_client = Client()
        verified_login(admin_client, administrator)

        assert self.unlock(admin_client, operator).status_code == 302

        assert not lockout.is_locked("olivia-operator", "198.51.100.1") and not lockout.is_slowed("olivia-operator")
        assert log_in(from_address("198.51.100.2"), password="correct-horse-battery").status_code == 302
        event = AuditEvent.objects.get(action="staff.changed", object_id=str(operator.pk))
        assert (event.actor_user, event.after) == (administrator, {"log_ins": "unlocked",
                                                                    "username": "olivia-operator"})

    def test_an_operator_cannot_unlock(self, operator, support):
        for _ in range(5):
            log_in(from_address("198.51.100.1"), username="sam-support")
        operator_client = Client()
        verified_login(operator_client, operator)
        assert self.unlock(operator_client, support).status_code == 403
        assert lockout.is_locked("sam-support", "198.51.100.1")
