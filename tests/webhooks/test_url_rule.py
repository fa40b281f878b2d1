"""Where a webhook may post: one rule (webhooks.validators) in the model, the API, the admin form, the
schema's pattern, the database and the sender."""

import re
import socket

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.test import override_settings
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from games import services as game_services
from tests.admin.conftest import client_for
from tests.admin.helpers import admin_url
from webhooks import services
from webhooks.api.serializers import EndpointInputSerializer
from webhooks.models import DeliveryAttempt, Endpoint
from webhooks.validators import URL_MAX_LENGTH, endpoint_url_pattern, refused_destination

URL = "/api/v1/webhooks/endpoints/"
PRODUCTION = {"WEBHOOK_ALLOW_HTTP": False, "WEBHOOK_BLOCK_PRIVATE": True}
DEVELOPMENT = {"WEBHOOK_ALLOW_HTTP": True, "WEBHOOK_BLOCK_PRIVATE": False}

ACCEPTED_EVERYWHERE = [
    "https://hooks.example/baccarat", "https://hooks.example", "https://a.b.example:8443/x/y?z=1&w=%20",
    "https://HOOKS.Example.com/path;v=1/@me?q=a/b?c", "https://xn--bcher-kva.example/",
]
REFUSED_EVERYWHERE = [
    "ftp://hooks.example/x", "not a url", "", "HTTPS://hooks.example/", "https://user:pass@hooks.example/",
    "https://user@hooks.example/", "https://hooks.example/#top", "https://hooks.example/a#", " https://hooks.example/",
    "https://hooks.example/ a", "https://hooks.example/é", "https://hooks.example:0/", "https://hooks.example:65536/",
    "https://-bad.example/", "https://hooks..example/", "https://[::1]/", "https://hooks.example/\n",
    "https://" + "a" * 64 + ".example/", "https://hooks.example/" + "a" * (URL_MAX_LENGTH - 21),
]
PRIVATE_OR_PLAIN = ["http://hooks.example/", "https://127.0.0.1/", "https://localhost:8000/", "https://10.0.0.7/",
                    "https://169.254.169.254/latest", "http://127.0.0.1:8330/hook", "https://receiver/"]


def accepts(**body) -> bool:
    return EndpointInputSerializer(data={"events": ["round.settled"], **body}).is_valid()


@pytest.mark.parametrize("url", ACCEPTED_EVERYWHERE + REFUSED_EVERYWHERE + PRIVATE_OR_PLAIN)
@pytest.mark.parametrize("mode", [PRODUCTION, DEVELOPMENT])
def test_the_serializer_the_pattern_and_the_lists_agree(settings, url, mode):
    for name, value in mode.items():
        setattr(settings, name, value)
    expected = url in ACCEPTED_EVERYWHERE or (url in PRIVATE_OR_PLAIN and mode is DEVELOPMENT)
    assert accepts(url=url) is expected
    assert (re.fullmatch(endpoint_url_pattern(), url) is not None and len(url) <= URL_MAX_LENGTH) is expected


@pytest.mark.parametrize("mode", [PRODUCTION, DEVELOPMENT])
@hypothesis_settings(max_examples=60)
@given(data=st.data())
def test_whatever_the_pattern_allows_the_server_accepts(mode, data):
    with override_settings(**mode):
        pattern = endpoint_url_pattern()
        url = data.draw(st.from_regex(pattern, fullmatch=True).filter(lambda text: len(text) <= URL_MAX_LENGTH))
        assert accepts(url=url), url


@hypothesis_settings(max_examples=200)
@given(url=st.one_of(st.text(max_size=40), st.builds("https://{}".format, st.text(max_size=30))))
def test_whatever_the_pattern_forbids_the_server_refuses(url):
    matches = re.fullmatch(endpoint_url_pattern(), url) is not None
    assert accepts(url=url) is matches


@pytest.mark.parametrize("url,reason", [
    ("http://hooks.example/", "must start with https://"), ("https://me:pw@hooks.example/", "No user or password"),
    ("https://hooks.example/#top", "No #fragment"), ("https://hooks.example/a b", "No spaces or non-ASCII"),
    ("https://hooks.example/é", "No spaces or non-ASCII"), ("https://10.0.0.7:8443/", "must be a public name"),
    ("https://localhost/", "must be a public name"), ("https://hooks.example/" + "a" * 500, "At most 500"),
    ("https://hooks..example/", "Enter a URL of at most 500 characters"),
])
def test_a_refusal_says_what_is_wrong(settings, url, reason):
    settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_BLOCK_PRIVATE = False, True
    serializer = EndpointInputSerializer(data={"url": url, "events": ["round.settled"]})
    assert not serializer.is_valid() and reason in str(serializer.errors["url"][0])


@pytest.mark.parametrize("body,field", [
    ({"url": 7}, "url"), ({"description": 12}, "description"), ({"description": "a\x00b"}, "description"),
    ({"description": "d" * 201}, "description"), ({"active": "yes"}, "active"), ({"active": 1}, "active"),
    ({"events": "round.settled"}, "events"), ({"events": [1]}, "events"), ({"events": None}, "events"),
])
def test_request_shapes_the_schema_forbids_are_refused(body, field):
    serializer = EndpointInputSerializer(data={"url": "https://hooks.example/", "events": ["round.settled"], **body})
    assert not serializer.is_valid() and field in serializer.errors


def test_a_description_is_kept_as_written_blank_included():
    for description in ("", "   ", " two words "):
        serializer = EndpointInputSerializer(data={"url": "https://a.example/", "events": ["round.settled"],
                                                   "description": description})
        assert serializer.is_valid() and serializer.validated_data["description"] == description


@pytest.mark.django_db
class TestEverywhere:
    def test_production_refuses_plain_http_and_private_hosts_through_the_api(self, api_as, integration, settings):
        settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_BLOCK_PRIVATE = False, True
        client = api_as(integration)
        for url in PRIVATE_OR_PLAIN:
            response = client.post(URL, {"reason": "new receiver", "url": url, "events": ["round.settled"]})
            assert response.status_code == 400 and "url" in response.json(), (url, response.content)
        assert not Endpoint.objects.exists()
        assert client.post(URL, {"reason": "new receiver",
                                 "url": "https://hooks.example/", "events": ["round.settled"]}).status_code == 201

    def test_the_schema_publishes_the_rule_of_the_settings(self, api_as, operator, settings):
        for allow_http, block_private in ((False, True), (True, False)):
            settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_BLOCK_PRIVATE = allow_http, block_private
            schema = api_as(operator).get("/api/schema/", HTTP_ACCEPT="application/json").json()
            for name in ("EndpointCreateRequest", "PatchedEndpointInputRequest"):
                component = schema["components"]["schemas"][name]
                url = component["properties"]["url"]
                assert url["pattern"] == endpoint_url_pattern() and url["maxLength"] == URL_MAX_LENGTH
                assert "format" not in url and component["additionalProperties"] is False
                assert component["properties"]["description"]["oneOf"] == [  # exactly one matches any text
                    {"type": "string", "maxLength": 200, "pattern": "^[^\\x00]+$"}, {"type": "string", "maxLength": 0}]

    def test_an_endpoint_created_paused_stays_paused(self, api_as, integration):
        response = api_as(integration).post(URL, {"reason": "new receiver",
                                                  "url": "https://a.example/", "events": ["round.voided"],
                                                  "active": False})
        assert response.status_code == 201 and response.json()["active"] is False
        assert not Endpoint.objects.get().active

    def test_the_admin_form_applies_the_same_rule(self, administrator, integration, settings):
        settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_BLOCK_PRIVATE = False, True
        client = client_for(administrator)
        form = {"owner": integration.pk, "url": "https://user:pw@hooks.example/", "events": ["round.voided"],
                "description": "", "active": "on", "reason": "New receiver"}
        response = client.post(admin_url(Endpoint, "add"), form)
        assert response.status_code == 200 and "No user or password in the URL." in response.content.decode()
        assert not Endpoint.objects.exists()
        client.post(admin_url(Endpoint, "add"), {**form, "url": "https://hooks.example/"})
        assert Endpoint.objects.get().url == "https://hooks.example/"

    def test_the_model_and_the_database_refuse_it_too(self, integration):
        with pytest.raises(ValidationError, match="No #fragment"):
            services.endpoint_create(actor=integration, reason="new receiver", owner=integration, url="https://a.example/#x",
                                     events=["round.voided"])
        with pytest.raises(IntegrityError):
            Endpoint.objects.create(owner=integration, url="ftp://a.example/", events=["round.voided"])


def addresses(*ips):
    return lambda host, port, **kwargs: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, 0)) for ip in ips]


@pytest.mark.parametrize("ips,refused", [
    (["93.184.216.34"], False), (["10.1.2.3"], True), (["93.184.216.34", "127.0.0.1"], True),
    (["169.254.169.254"], True), (["100.64.0.1"], True), (["::ffff:192.168.1.1"], True), (["224.0.0.1"], True),
])
def test_the_sender_refuses_a_name_that_resolves_inside_the_network(monkeypatch, settings, ips, refused):
    settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_BLOCK_PRIVATE = False, True
    monkeypatch.setattr(socket, "getaddrinfo", addresses(*ips))
    assert (refused_destination("https://hooks.example/") is not None) is refused


def addresses6(*ips):
    return lambda host, port, **kwargs: [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (ip, 0, 0, 0)) for ip in ips]


@pytest.mark.parametrize("ip,reason", [
    ("64:ff9b::a9fe:a9fe", "NAT64 of 169.254.169.254"), ("64:ff9b::7f00:1", "NAT64 of 127.0.0.1"),
    ("64:ff9b:1::a00:1", "not global unicast"),  # local-use NAT64
    ("2002:7f00:1::1", "6to4 of 127.0.0.1"), ("2002:a9fe:a9fe::", "6to4 of 169.254.169.254"),
    ("::127.0.0.1", "IPv4-compatible"), ("::8.8.8.8", "IPv4-compatible"),
    ("::ffff:169.254.169.254", "IPv4-mapped 169.254.169.254"), ("::ffff:0:a00:1", "not global unicast"),
    ("fec0::1", "not global unicast"), ("fc00::1", "not global unicast"), ("fe80::1%eth0", "not global unicast"),
    ("::1", "not global unicast"), ("::", "not global unicast"), ("ff0e::1", "not global unicast"),
    ("100::1", "not global unicast"), ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("2001:db8::1", "not public"), ("2001:2::1", "not public"),
    ("192.0.0.9", "not public"), ("192.88.99.1", "not public"), ("198.18.0.1", "not public"),
    ("0.0.0.0", "not public"), ("255.255.255.255", "not public"),
])
def test_the_sender_refuses_every_address_but_a_global_unicast_one(monkeypatch, settings, ip, reason):
    """Python 3.11's ``is_global`` calls NAT64, 6to4, IPv4-compatible and site-local addresses global."""
    settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_BLOCK_PRIVATE = False, True
    monkeypatch.setattr(socket, "getaddrinfo", (addresses6 if ":" in ip else addresses)("93.184.216.34", ip))
    refused = refused_destination("https://hooks.example/")
    assert refused is not None and reason in refused, refused


@pytest.mark.parametrize("ip", ["2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "64:ff9b::5db8:d822",
                                "::ffff:93.184.216.34", "2002:5db8:d822::1", "8.8.8.8"])
def test_public_addresses_embedded_ones_included_pass(monkeypatch, settings, ip):
    settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_BLOCK_PRIVATE = False, True
    monkeypatch.setattr(socket, "getaddrinfo", (addresses6 if ":" in ip else addresses)(ip))
    assert refused_destination("https://hooks.example/") is None


def test_the_sender_checks_the_rule_of_now(settings):
    settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_BLOCK_PRIVATE = True, False
    assert refused_destination("http://127.0.0.1:8330/hook") is None
    settings.WEBHOOK_ALLOW_HTTP = False
    assert "https://" in refused_destination("http://127.0.0.1:8330/hook")


@pytest.mark.django_db
def test_a_delivery_to_a_url_no_longer_allowed_is_not_posted(receiver, endpoint, dealt_round, operator, settings,
                                                           django_capture_on_commit_callbacks):
    endpoint(["round.voided"])
    settings.WEBHOOK_ALLOW_HTTP = False
    with django_capture_on_commit_callbacks(execute=True):
        game_services.round_void(round_id=dealt_round.pk, actor=operator, reason="misdeal")
    assert receiver.requests == []
    attempt = DeliveryAttempt.objects.get()
    assert attempt.status_code is None and attempt.error.startswith("Destination refused")


@pytest.mark.django_db
def test_a_redirect_is_not_followed(receiver, endpoint, dealt_round, operator, django_capture_on_commit_callbacks):
    receiver.script = [("redirect", receiver.url + "/elsewhere")]
    endpoint(["round.voided"])
    with django_capture_on_commit_callbacks(execute=True):
        game_services.round_void(round_id=dealt_round.pk, actor=operator, reason="misdeal")
    assert len(receiver.requests) == 1
    attempt = DeliveryAttempt.objects.get()
    assert (attempt.status_code, attempt.error) == (302, "HTTP 302")
