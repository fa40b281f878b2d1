"""Hostile requests to the incidents API, the API's index, the probes (/-/alive, /-/ready) and
/metrics: each is a well-formed refusal (JSON under /api/), never a 500, and none reveals more to a
caller who may not see it."""

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from alerts.models import Incident
from tests.api.helpers import API, assert_names_field
from tests.conftest import api_client_for

INCIDENTS = f"{API}/incidents/"
METRICS_TOKEN = "m" * 40


@pytest.fixture
def incident(db):
    return Incident.objects.create(opened_at=timezone.now(), cause="database unreachable")


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["0/", "-1/", "9223372036854775808/", "99999999999999999999999/", "1.0/",
                                  "%00/", "%D9%A1/", "1%20/", "abc/"])
def test_an_incident_id_that_is_none_is_a_json_404(administrator, incident, path):
    response = api_client_for(administrator).get(INCIDENTS + path)
    assert response.status_code == 404 and response.json(), response.content


@pytest.mark.django_db
@pytest.mark.parametrize(("query", "field"), [
    ({"status": "nope"}, "status"), ({"status": ""}, "status"), ({"status": "open\x00"}, "status"),
    ({"status": ["open", "restored"]}, "status"), ({"status": "OPEN"}, "status"),
    ({"status": "open\u200b"}, "status"),
])
def test_a_bad_incident_filter_is_a_400_naming_it(administrator, incident, query, field):
    assert_names_field(api_client_for(administrator).get(INCIDENTS, query), 400, field)


@pytest.mark.django_db
@pytest.mark.parametrize("size", ["0", "-1", "201", "1e2", "1.0", "\u0661", "99999999999999999999999", ""])
@pytest.mark.parametrize("path", [INCIDENTS, f"{API}/api-tokens/"])
def test_a_page_size_out_of_range_is_a_400_naming_it(administrator, incident, path, size):
    assert_names_field(api_client_for(administrator).get(path, {"page_size": size}), 400, "page_size")


@pytest.mark.django_db
@pytest.mark.parametrize("cursor", ["x", "\x00", "cD0x" * 1000, "%ZZ"])
def test_a_cursor_the_api_did_not_give_is_refused_as_json(administrator, incident, cursor):
    response = api_client_for(administrator).get(INCIDENTS, {"cursor": cursor})
    assert 400 <= response.status_code < 500 and response.json(), response.content


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_incidents_are_read_only(administrator, incident, method):
    client = api_client_for(administrator)
    for path in (INCIDENTS, f"{INCIDENTS}{incident.pk}/"):
        response = client.generic(method, path, '{"status": "restored"}', content_type="application/json")
        assert response.status_code == 405 and "detail" in response.json(), response.content
    incident.refresh_from_db()
    assert incident.status == "open"


@pytest.mark.django_db
def test_incidents_need_a_role_that_reads_them(integration, incident):
    assert APIClient().get(INCIDENTS).status_code == 401
    assert APIClient().get(f"{INCIDENTS}{incident.pk}/").status_code == 401
    for client in (api_client_for(integration), api_client_for(integration, scopes=["bets"])):
        for path in (INCIDENTS, f"{INCIDENTS}{incident.pk}/"):
            response = client.get(path)
            assert response.status_code == 403 and "detail" in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_the_index_answers_only_reads(method):
    response = APIClient().generic(method, f"{API}/", "{}", content_type="application/json")
    assert response.status_code == 405 and "detail" in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("extra", [{"QUERY_STRING": "a=%00"}, {"HTTP_AUTHORIZATION": "Token \x00"},
                                   {"HTTP_AUTHORIZATION": "Token nonsense"}, {"HTTP_X_FORWARDED_FOR": "\x00, ::1%lo"},
                                   {"HTTP_COOKIE": "sessionid=\x7f\x01"}])
def test_the_index_is_the_same_to_every_caller(extra):
    plain = APIClient().get(f"{API}/")
    odd = APIClient().get(f"{API}/", **extra)
    assert plain.status_code == 200
    assert odd.status_code in (200, 400) and odd.json()
    if odd.status_code == 200:
        assert odd.json() == plain.json()
    assert not any("<" in url for url in plain.json()["resources"].values())  # no route with a parameter


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/-/alive", "/-/ready"])
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "PROPFIND"])
def test_probes_answer_odd_methods_with_a_405(path, method):
    response = Client().generic(method, path, "x" * 100)
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"


@pytest.mark.django_db
@pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer ", f"Bearer {METRICS_TOKEN[:-1]}",
                                    f"Bearer {METRICS_TOKEN}x", f"Bearer {METRICS_TOKEN[:20]}",
                                    f"Bearer {'m' * 4000}", f"Token {METRICS_TOKEN}", f"Basic {METRICS_TOKEN}",
                                    f"Bearer {METRICS_TOKEN[:-1]}\u00ff", f"Bearer\t{METRICS_TOKEN}",
                                    f"Bearer {METRICS_TOKEN.upper()}"])
def test_metrics_refuse_any_other_token(settings, header):
    settings.METRICS_ENABLED, settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = True, METRICS_TOKEN, []
    extra = {} if header is None else {"HTTP_AUTHORIZATION": header}
    response = Client().get("/metrics", **extra)
    assert response.status_code == 401 and METRICS_TOKEN not in response.content.decode()
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {METRICS_TOKEN}").status_code == 200


@pytest.mark.django_db
def test_metrics_believe_no_forwarded_address_from_an_untrusted_peer(settings):
    settings.METRICS_ENABLED, settings.METRICS_TOKEN = True, ""
    settings.METRICS_ALLOWED_IPS, settings.TRUSTED_PROXIES = ["10.1.0.0/16"], ["192.0.2.1"]
    for forwarded in ("10.1.2.3", "203.0.113.1, 10.1.2.3", "10.1.2.3, 192.0.2.1"):
        response = Client(REMOTE_ADDR="203.0.113.9").get("/metrics", HTTP_X_FORWARDED_FOR=forwarded)
        assert response.status_code == 401, forwarded
    assert Client(REMOTE_ADDR="192.0.2.1").get("/metrics", HTTP_X_FORWARDED_FOR="10.1.2.3").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("host", ["evil.example", "localhost\x00", "[::1", "a" * 300])
def test_the_index_names_no_host_it_does_not_serve(host):
    response = APIClient().get(f"{API}/", HTTP_HOST=host)
    assert response.status_code == 400 and response.json(), response.content
    assert "evil" not in response.content.decode()
