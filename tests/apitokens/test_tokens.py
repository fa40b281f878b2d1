"""API tokens kept as keyed digests (apitokens): what the database holds, pepper rotation, expiry,
addresses, scopes, last use, and the api_token command."""

import hashlib
import hmac
import subprocess
import sys
from datetime import timedelta
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.exceptions import AuthenticationFailed

from apitokens import authentication, services
from apitokens.models import ApiToken
from tests.apitokens.helpers import token_of

pytestmark = pytest.mark.django_db

OLD_PEPPER, NEW_PEPPER = "the-old-pepper-of-last-year", "the-new-pepper-of-this-year"


def authenticate(secret: str, address: str = "198.51.100.7"):
    authenticator = authentication.TokenAuthentication()
    authenticator.request = RequestFactory().get("/", REMOTE_ADDR=address)
    return authenticator.authenticate_credentials(secret)


def make(owner, **options):
    return services.token_create(owner=owner, actor="system:tests", **options)


class TestWhatIsKept:
    def test_only_a_keyed_digest_and_a_short_prefix_are_kept(self, integration, settings):
        token, secret = make(integration, scopes=["read", "bets"])
        assert secret.startswith("bo_") and len(secret) == 43
        expected = hmac.new(settings.API_TOKEN_PEPPERS[0].encode(), secret.encode(), hashlib.sha256).hexdigest()
        assert (token.digest, token.prefix) == (expected, secret[:10])
        with connection.cursor() as cursor:
            cursor.execute("SELECT row_to_json(t)::text FROM apitokens_apitoken t")
            stored = cursor.fetchone()[0]
        assert secret not in stored and secret[10:] not in stored and secret[12:30] not in stored

    def test_a_token_is_found_by_its_digest_alone(self, integration):
        token, secret = make(integration)
        user, found = authenticate(secret)
        assert (user.pk, found.pk) == (integration.pk, token.pk)
        with pytest.raises(AuthenticationFailed, match="Invalid token"):
            authenticate(secret[:-1] + ("A" if secret[-1] != "A" else "B"))


class TestPeppers:
    def test_a_token_made_under_an_earlier_pepper_works_and_is_redigested(self, integration, settings):
        settings.API_TOKEN_PEPPERS = [OLD_PEPPER]
        token, secret = make(integration)
        settings.API_TOKEN_PEPPERS = [NEW_PEPPER, OLD_PEPPER]
        assert authenticate(secret)[1].pk == token.pk
        token.refresh_from_db()
        assert token.digest == hmac.new(NEW_PEPPER.encode(), secret.encode(), hashlib.sha256).hexdigest()
        settings.API_TOKEN_PEPPERS = [NEW_PEPPER]  # the old pepper retired: the re-digested token still works
        assert authenticate(secret)[1].pk == token.pk

    def test_a_token_whose_pepper_is_gone_is_unknown(self, integration, settings):
        settings.API_TOKEN_PEPPERS = [OLD_PEPPER]
        _token, secret = make(integration)
        settings.API_TOKEN_PEPPERS = [NEW_PEPPER]
        with pytest.raises(AuthenticationFailed, match="Invalid token"):
            authenticate(secret)

    def test_one_statement_reads_a_token_under_any_pepper(self, integration, settings):
        settings.API_TOKEN_PEPPERS = [NEW_PEPPER, OLD_PEPPER]
        _token, secret = make(integration)
        with CaptureQueriesContext(connection) as queries:
            authenticate(secret)
        reads = [query["sql"] for query in queries.captured_queries if query["sql"].startswith("SELECT")]
        assert len(reads) == 1

    def test_without_a_pepper_nothing_is_made(self, integration, settings):
        settings.API_TOKEN_PEPPERS = []
        with pytest.raises(Exception, match="API_TOKEN_PEPPERS"):
            make(integration)

    @pytest.mark.parametrize(("environment", "refused"), [({"DEBUG": "0"}, True), ({"DEBUG": "1"}, False)])
    def test_a_production_web_server_without_a_pepper_refuses_to_start(self, environment, refused):
        env = {"PATH": "/usr/bin:/bin", "SECRET_KEY": "a-key-for-this-test-only", "API_TOKEN_PEPPERS": "",
               "DJANGO_SETTINGS_MODULE": "baccarat_site.settings", **environment}
        result = subprocess.run([sys.executable, "-c", "import baccarat_site.wsgi"], env=env, capture_output=True,
                                text=True, timeout=120)
        assert (result.returncode != 0) == refused, result.stderr[-2000:]
        assert ("API_TOKEN_PEPPERS must not be empty" in result.stderr) == refused

    def test_a_short_pepper_stops_the_start(self):
        env = {"PATH": "/usr/bin:/bin", "API_TOKEN_PEPPERS": "short",
               "DJANGO_SETTINGS_MODULE": "baccarat_site.settings"}
        result = subprocess.run([sys.executable, "-c", "import django; django.setup()"], env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode != 0 and "at least 16 characters" in result.stderr


class TestExpiryAndAddresses:
    def test_a_staff_token_expires_by_default_a_game_server_s_does_not(self, operator, integration, settings):
        settings.STAFF_TOKEN_DAYS = 90
        staff, _ = make(operator)
        assert abs(staff.expires_at - (timezone.now() + timedelta(days=90))) < timedelta(minutes=1)
        assert make(integration)[0].expires_at is None
        settings.STAFF_TOKEN_DAYS = 0
        assert make(operator)[0].expires_at is None

    def test_an_expired_token_is_refused(self, integration):
        token, secret = make(integration, expires_at=timezone.now() + timedelta(hours=1))
        assert authenticate(secret)[1].pk == token.pk
        ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        with pytest.raises(AuthenticationFailed, match="expired"):
            authenticate(secret)

    def test_an_expiry_in_the_past_is_refused_naming_the_field(self, integration):
        with pytest.raises(ValidationError) as refused:
            make(integration, expires_at=timezone.now() - timedelta(minutes=1))
        assert "expires_at" in refused.value.message_dict

    def test_only_the_allowed_addresses_may_use_it(self, integration):
        _token, secret = make(integration, allowed_ips=["198.51.100.0/24", "2001:db8::/32"])
        assert authenticate(secret, "198.51.100.200")[0] == integration
        assert authenticate(secret, "2001:db8::5")[0] == integration
        for address in ("203.0.113.1", "2001:db9::1"):
            with pytest.raises(AuthenticationFailed, match="address"):
                authenticate(secret, address)

    def test_the_address_is_the_one_the_proxy_settings_define(self, integration, settings):
        settings.TRUSTED_PROXIES = ["10.0.0.1"]
        _token, secret = make(integration, allowed_ips=["198.51.100.0/24"])
        authenticator = authentication.TokenAuthentication()
        authenticator.request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1",
                                                     HTTP_X_FORWARDED_FOR="198.51.100.9")
        assert authenticator.authenticate_credentials(secret)[0] == integration
        authenticator.request = RequestFactory().get("/", REMOTE_ADDR="203.0.113.5",
                                                     HTTP_X_FORWARDED_FOR="198.51.100.9")  # not a trusted proxy
        with pytest.raises(AuthenticationFailed, match="address"):
            authenticator.authenticate_credentials(secret)

    @pytest.mark.parametrize("cidrs", [["not-an-address"], ["10.0.0.0/33"], ["10.0.0.0/8"] * 51])
    def test_bad_addresses_are_refused_naming_the_field(self, integration, cidrs):
        if len(cidrs) > 50:
            cidrs = [f"10.0.{n}.0/24" for n in range(51)]
        with pytest.raises(ValidationError) as refused:
            make(integration, allowed_ips=cidrs)
        assert "allowed_ips" in refused.value.message_dict

    def test_cidrs_are_kept_normalised(self, integration):
        assert make(integration, allowed_ips=["10.1.2.3/8", " 2001:DB8::1 "])[0].allowed_ips == [
            "10.0.0.0/8", "2001:db8::1/128"]


class TestScopes:
    def test_scopes_are_kept_in_order_and_unknown_ones_refused(self, operator):
        assert make(operator, scopes=["write", "read"])[0].scopes == ["read", "write"]
        for scopes in ([], ["admin"]):
            with pytest.raises(ValidationError) as refused:
                make(operator, scopes=scopes)
            assert "scopes" in refused.value.message_dict

    def test_a_regulator_s_and_support_s_tokens_read_only_whatever_is_asked(self, regulator, support):
        for owner in (regulator, support):
            assert make(owner, scopes=["read", "bets", "write"])[0].scopes == ["read"]

    def test_what_each_scope_allows(self, operator):
        read, bets, write = (make(operator, scopes=[scope])[0] for scope in ("read", "bets", "write"))
        assert read.allows("games.view_round") and read.allows("games.verify_round")
        assert not read.allows("games.place_bet") and not read.allows("wallet.adjust_account")
        assert bets.allows("games.place_bet") and bets.allows("games.open_round") and bets.allows("games.deal_round")
        assert not bets.allows("games.view_round") and not bets.allows("games.void_round")
        assert write.allows("wallet.adjust_account") and write.allows("games.view_round")


class TestLastUse:
    def test_written_at_most_once_a_minute_per_token(self, integration, monkeypatch):
        token, secret = make(integration)
        clock = [1000.0]
        monkeypatch.setattr(authentication.time, "monotonic", lambda: clock[0])

        def writes() -> int:
            with CaptureQueriesContext(connection) as queries:
                authenticate(secret)
            return sum(query["sql"].startswith("UPDATE") for query in queries.captured_queries)

        assert [writes(), writes()] == [1, 0]
        token.refresh_from_db()
        assert token.last_used_at is not None
        clock[0] += 59
        assert writes() == 0
        clock[0] += 2
        assert writes() == 1


class TestRotationAndRevocation:
    def test_rotation_makes_a_new_token_and_lets_the_old_one_overlap(self, integration, settings):
        settings.API_TOKEN_ROTATION_OVERLAP_HOURS = 24
        old, old_secret = make(integration, scopes=["read", "bets"], allowed_ips=["198.51.100.0/24"], label="table")
        new, new_secret = services.token_rotate(token_id=old.pk, actor="system:tests")
        old.refresh_from_db()
        assert (new.scopes, new.allowed_ips, new.label, new.owner) == (
            old.scopes, old.allowed_ips, "table", integration)
        assert abs(old.expires_at - (timezone.now() + timedelta(hours=24))) < timedelta(minutes=1)
        assert authenticate(old_secret)[1].pk == old.pk and authenticate(new_secret)[1].pk == new.pk
        services.token_revoke(token_id=old.pk, actor="system:tests")
        with pytest.raises(ValidationError):
            services.token_rotate(token_id=old.pk, actor="system:tests")

    def test_a_read_only_role_s_token_rotates_to_a_read_only_one(self, regulator):
        old, _ = make(regulator)
        ApiToken.objects.filter(pk=old.pk).update(scopes=["write"])  # as an upgrade may have made it
        assert services.token_rotate(token_id=old.pk, actor="system:tests")[0].scopes == ["read"]

    def test_a_revoked_token_is_refused(self, integration):
        token, secret = make(integration)
        services.token_revoke(token_id=token.pk, actor="system:tests")
        with pytest.raises(AuthenticationFailed, match="revoked"):
            authenticate(secret)


class TestCommand:
    def run(self, *args) -> list:
        out = StringIO()
        call_command("api_token", *args, stdout=out)
        return out.getvalue().splitlines()

    def test_create_prints_the_token_last_and_list_never_shows_it(self, integration):
        lines = self.run("create", "game-server", "--scopes", "read,bets", "--expires-at", "2099-01-01T00:00:00Z",
                         "--allowed-ips", "198.51.100.0/24,2001:db8::/32", "--label", "table 1")
        token = token_of(lines[-1])
        assert (token.owner, token.scopes, token.allowed_ips, token.label) == (
            integration, ["read", "bets"], ["198.51.100.0/24", "2001:db8::/32"], "table 1")
        assert token.expires_at.isoformat() == "2099-01-01T00:00:00+00:00"
        listed = "\n".join(self.run("list", "game-server"))
        assert f"#{token.pk} {token.prefix}…" in listed and lines[-1] not in listed
        assert "198.51.100.0/24" in listed and "read,bets" in listed

    def test_rotate_and_revoke(self, integration):
        first = token_of(self.run("create", "game-server")[-1])
        second = token_of(self.run("rotate", str(first.pk))[-1])
        assert second.pk != first.pk and second.owner == integration
        self.run("revoke", str(second.pk))
        second.refresh_from_db()
        assert not second.enabled

    @pytest.mark.parametrize(("args", "message"), [
        (("create", "nobody-here"), "No user"),
        (("create", "game-server", "--scopes", "everything"), "unknown: everything"),
        (("create", "game-server", "--expires-at", "tomorrow"), "ISO 8601"),
        (("create", "game-server", "--allowed-ips", "10.0.0.0/99"), "allowed_ips"),
        (("revoke", "999999"), "No API token"),
    ])
    def test_bad_input_is_a_clear_error(self, integration, args, message):
        with pytest.raises(CommandError, match=message):
            self.run(*args)
