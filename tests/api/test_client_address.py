"""Who is asking: the client's address, computed once per request and trusting X-Forwarded-For only
from TRUSTED_PROXIES (backoffice.addresses), as the throttles and the audit trail see it."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from audit.models import AuditEvent
from backoffice.addresses import compute_client_address, trusted_networks
from tests.api.helpers import API

PROXIES = ["10.0.0.0/8", "2001:db8:ff::/48"]


def address(remote_addr, forwarded=None):
    meta = {"REMOTE_ADDR": remote_addr}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return compute_client_address(meta)


class TestTheAddress:
    def test_with_no_proxy_configured_the_header_is_ignored(self, settings):
        settings.TRUSTED_PROXIES = []
        assert address("203.0.113.5", "198.51.100.1") == "203.0.113.5"
        assert address("10.0.0.2", "198.51.100.1") == "10.0.0.2"

    def test_the_right_most_address_no_trusted_proxy_wrote_is_the_client(self, settings):
        settings.TRUSTED_PROXIES = PROXIES
        assert address("10.0.0.2", "198.51.100.1") == "198.51.100.1"
        # What the client wrote itself, left of what the proxies appended, is its own claim.
        assert address("10.0.0.2", "1.2.3.4, 198.51.100.1, 10.0.0.9") == "198.51.100.1"
        assert address("2001:db8:ff::1", "2001:DB8:0::7") == "2001:db8::7"
        assert address("10.0.0.2", "::ffff:198.51.100.3") == "198.51.100.3"

    def test_a_peer_that_is_not_a_trusted_proxy_is_the_client(self, settings):
        settings.TRUSTED_PROXIES = PROXIES
        assert address("203.0.113.5", "198.51.100.1") == "203.0.113.5"

    def test_only_trusted_proxies_in_the_chain_names_the_furthest(self, settings):
        settings.TRUSTED_PROXIES = PROXIES
        assert address("10.0.0.2", "10.1.1.1, 10.0.0.3") == "10.1.1.1"
        assert address("10.0.0.2") == "10.0.0.2"

    @pytest.mark.parametrize("forwarded,expected", [
        ("", "10.0.0.2"), ("unknown", "10.0.0.2"), ("garbage, 198.51.100.1", "198.51.100.1"),
        ("198.51.100.1, not-an-address", "10.0.0.2"), ("198.51.100.1\x00", "10.0.0.2"),
        ("[2001:db8::5]:443", "2001:db8::5"), ("198.51.100.1:5678", "198.51.100.1"),
        ("fe80::1%eth0", "fe80::1"), ("é" * 5000, "10.0.0.2"), (",,,", "10.0.0.2"),
        ("1.2.3.4/8", "10.0.0.2"), ("::ffff:10.0.0.5, 10.0.0.1", "10.0.0.5"),
    ])
    def test_a_malformed_header_is_never_believed_and_never_fails(self, settings, forwarded, expected):
        settings.TRUSTED_PROXIES = PROXIES
        assert address("10.0.0.2", forwarded) == expected

    @pytest.mark.parametrize("remote_addr", ["", None, "not-an-address", "10.0.0.2\x00"])
    def test_a_peer_without_an_address_is_no_proxy(self, settings, remote_addr):
        settings.TRUSTED_PROXIES = PROXIES
        assert address(remote_addr, "198.51.100.1") is None

    def test_a_proxy_on_a_unix_socket(self, settings):
        settings.TRUSTED_PROXIES = ["unix"]
        assert address("", "198.51.100.1") == "198.51.100.1"
        assert address("203.0.113.5", "198.51.100.1") == "203.0.113.5"

    def test_a_proxy_setting_that_is_no_address_stops_the_start(self):
        with pytest.raises(ImproperlyConfigured, match="TRUSTED_PROXIES"):
            trusted_networks(("10.0.0.0/8", "proxy.internal"))


def test_a_malformed_header_is_no_500(settings, api_as):
    settings.TRUSTED_PROXIES = PROXIES
    anonymous = api_as(None)
    for forwarded in ("unknown", "\x00", "1.2.3.4, ,, [::1", "a" * 8000, "::ffff:", "999.1.1.1"):
        assert anonymous.get("/api/schema/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded).status_code == 200
    assert Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="\x00, [").get("/admin/login/").status_code == 200


def test_the_audit_trail_records_the_client_behind_the_proxy(settings, as_operator, game):
    settings.TRUSTED_PROXIES = PROXIES
    response = as_operator.patch(f"{API}/games/main-table/", {"tie_multiplier": "8.5", "reason": "promo"},
                                 REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 198.51.100.23")
    assert response.status_code == 200
    assert AuditEvent.objects.get(action="game.configured").source_ip == "198.51.100.23"


def test_the_audit_trail_ignores_the_header_of_an_untrusted_peer(settings, as_operator, game):
    settings.TRUSTED_PROXIES = PROXIES
    as_operator.patch(f"{API}/games/main-table/", {"tie_multiplier": "8.5", "reason": "promo"},
                      REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="198.51.100.23")
    assert AuditEvent.objects.get(action="game.configured").source_ip == "203.0.113.9"


def test_the_admin_s_audit_trail_records_the_client_behind_the_proxy(settings, operator):
    settings.TRUSTED_PROXIES = PROXIES
    client = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.24")
    client.post("/admin/login/?next=/admin/", {"username": "olivia-operator", "password": "wrong"})
    assert AuditEvent.objects.get(action="auth.login_failed").source_ip == "198.51.100.24"


def test_only_a_trusted_proxy_may_say_the_request_came_over_https(settings, operator):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.TRUSTED_PROXIES = PROXIES
    through_proxy = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_PROTO="https").get("/admin/login/")
    assert through_proxy.status_code == 200
    direct = Client(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_PROTO="https").get("/admin/login/")
    assert direct.status_code == 301 and direct["Location"].startswith("https://")

