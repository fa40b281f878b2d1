"""Input the database cannot store, oversized bodies and numbers out of range never reach a query:
a 400, 404 or 413, JSON under /api/ and a styled page elsewhere, never a 500."""

import base64
import bz2
import codecs
import io
import json
import zlib

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client

from baccarat_site.wsgi import application
from backoffice.middleware import declared_charset
from tests.api.helpers import API
from tests.conftest import verified_login

pytestmark = pytest.mark.django_db

ADMIN_LISTS = ["games/round", "games/bet", "audit/auditevent", "wallet/account", "wallet/ledgerentry",
               "games/gameinstance", "games/seedpair"]


def assert_json(response, status: int):
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    return response.json()


def assert_page(response, status: int):
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("text/html")
    assert b"<!DOCTYPE html>" in response.content and str(status).encode() in response.content


@pytest.fixture
def staff_client(operator):
    client = Client()
    verified_login(client, operator)
    return client


class TestNul:
    @pytest.mark.parametrize("path", ["accounts/%00/", "accounts/%00/ledger/", "games/%00/", "rounds/%00/",
                                      "games/a%00b/rounds/"])
    def test_a_nul_in_an_api_path_is_a_json_404(self, as_operator, path):
        assert_json(as_operator.get(f"{API}/{path}"), 404)

    @pytest.mark.parametrize("query", ["status=%00", "account=%00", "game=x%00", "%00=1"])
    def test_a_nul_in_an_api_query_is_a_json_400(self, as_operator, query):
        body = assert_json(as_operator.get(f"{API}/bets/?{query}"), 400)
        assert "NUL" in str(body)

    def test_a_nul_in_the_token_is_a_400(self, api_as):
        from rest_framework.test import APIClient

        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION="Token abc\x00def")
        assert_json(client.get(f"{API}/games/"), 400)

    @pytest.mark.parametrize("model", ADMIN_LISTS)
    def test_a_nul_in_an_admin_filter_is_a_400_page(self, staff_client, model):
        assert_page(staff_client.get(f"/admin/{model}/?status__exact=%00"), 400)
        assert_page(staff_client.get(f"/admin/{model}/?q=%00"), 400)

    def test_a_nul_in_an_admin_path_is_a_404_page(self, staff_client):
        assert_page(staff_client.get("/admin/wallet/account/%00/change/"), 404)

    def test_a_nul_in_a_form_post_is_a_400_page(self, staff_client):
        assert_page(staff_client.post("/admin/login/", {"username": "x\x00", "password": "y"}), 400)

    def test_a_nul_on_the_public_page_is_a_400_page(self, client):
        assert_page(client.get("/?server_seed=%00"), 400)


class TestErrorsUnderApiAreJson:
    def test_unknown_path(self, as_operator):
        assert_json(as_operator.get(f"{API}/nothing-here/"), 404)

    def test_method_not_allowed(self, as_operator):
        assert_json(as_operator.delete(f"{API}/games/"), 405)

    def test_unsupported_media_type(self, as_operator):
        assert_json(as_operator.generic("POST", f"{API}/games/", "a=1", content_type="text/plain"), 415)

    @pytest.mark.parametrize("debug", [False, True])
    def test_a_missing_trailing_slash_is_a_json_308_that_keeps_the_bet(self, as_integration, open_round, player,
                                                                      settings, debug):
        settings.DEBUG = debug  # where Django refuses to redirect a POST, lest its body be lost
        body = {"account": "player-1", "bet_type": "TIE", "stake": "5.00", "idempotency_key": "slash"}
        redirect = as_integration.post(f"{API}/rounds/{open_round.pk}/bets?x=1", body)
        assert redirect["Location"] == f"{API}/rounds/{open_round.pk}/bets/?x=1"
        assert redirect["Location"] in assert_json(redirect, 308)["detail"]
        followed = as_integration.post(redirect["Location"], body)
        assert assert_json(followed, 201)["idempotency_key"] == "slash"
        assert assert_json(as_integration.get(f"{API}/rounds/{open_round.pk}"), 308)["detail"]

    def test_a_page_without_its_trailing_slash_is_still_django_s_redirect(self, staff_client):
        response = staff_client.get("/admin/login")
        assert (response.status_code, response["Location"]) == (301, "/admin/login/")

    def test_a_body_too_large_is_a_json_413(self, as_operator, settings):
        body = '{"slug": "' + "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1) + '"}'
        assert_json(as_operator.generic("POST", f"{API}/games/", body, content_type="application/json"), 413)

    def test_an_admin_form_too_large_is_a_413_page(self, staff_client, settings):
        settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
        assert_page(staff_client.post("/admin/login/", {"username": "x" * 2000, "password": "y"}), 413)

    def test_a_server_error_is_json_with_the_request_id(self, as_operator, monkeypatch):
        from games import selectors

        def broken(**kwargs):
            raise RuntimeError("boom")

        monkeypatch.setattr(selectors, "game_list", broken)
        as_operator.raise_request_exception = False
        response = as_operator.get(f"{API}/games/", HTTP_X_REQUEST_ID="trace-123")
        body = assert_json(response, 500)
        assert body["request_id"] == "trace-123" and response["X-Request-ID"] == "trace-123"
        assert "boom" not in response.content.decode()

    def test_with_debug_an_unknown_path_is_still_json(self, as_operator, settings):
        settings.DEBUG = True  # make run's development server: Django would answer its technical page
        assert assert_json(as_operator.get(f"{API}/nothing-here/"), 404) == {"detail": "Not found."}

    def test_with_debug_a_server_error_is_still_json(self, as_operator, monkeypatch, settings):
        from games import selectors

        def broken(**kwargs):
            raise RuntimeError("boom")

        settings.DEBUG = True
        monkeypatch.setattr(selectors, "game_list", broken)
        as_operator.raise_request_exception = False
        response = as_operator.get(f"{API}/games/", HTTP_X_REQUEST_ID="trace-456")
        assert assert_json(response, 500)["request_id"] == "trace-456"
        assert "boom" not in response.content.decode()

    def test_with_debug_a_traceback_on_a_page_names_variables_but_shows_no_value(
            self, staff_client, monkeypatch, settings):
        from games.admin import round as round_admin

        def broken(*args, **kwargs):
            server_seed = "5eed" * 16  # noqa: F841 (the frame's variable the page must not show)
            raise RuntimeError("boom")

        settings.DEBUG = True
        monkeypatch.setattr(round_admin.selectors, "round_search_page", broken)
        staff_client.raise_request_exception = False
        response = staff_client.get("/admin/games/round/recall/?round_id=1")
        page = response.content.decode()
        assert response.status_code == 500 and "boom" in page and "server_seed" in page  # the technical page
        assert "5eed5eed" not in page

    def test_a_server_error_on_a_page_is_a_styled_page(self, staff_client, monkeypatch):
        from games.admin import round as round_admin

        def broken(*args, **kwargs):
            raise RuntimeError("boom")

        monkeypatch.setattr(round_admin.selectors, "round_search_page", broken)
        staff_client.raise_request_exception = False
        response = staff_client.get("/admin/games/round/recall/?round_id=1")
        assert_page(response, 500)
        assert response["X-Request-ID"].encode() in response.content


class TestNumbersInRange:
    @pytest.mark.parametrize("path", ["rounds/99999999999999999999/", "rounds/9223372036854775808/bets/",
                                      "bets/9223372036854775808/", "rounds/0/"])
    def test_ids_out_of_range_are_a_json_404(self, as_operator, path):
        assert_json(as_operator.get(f"{API}/{path}"), 404)

    def test_the_largest_id_is_a_plain_404(self, as_operator):
        assert_json(as_operator.get(f"{API}/rounds/9223372036854775807/"), 404)

    def test_a_filter_id_out_of_range_is_a_400_naming_it(self, as_operator):
        assert "round" in assert_json(as_operator.get(f"{API}/bets/?round=9223372036854775808"), 400)

    @pytest.mark.parametrize("query", ["round_id=1&page=999999999999999999999", "round_id=1&page=-5",
                                       "round_id=99999999999999999999"])
    def test_the_recall_bounds_its_page_and_round_id(self, staff_client, query):
        response = staff_client.get(f"/admin/games/round/recall/?{query}")
        assert response.status_code == 200

    @pytest.mark.parametrize("model", ADMIN_LISTS)
    def test_admin_pages_and_ids_out_of_range(self, staff_client, model):
        assert staff_client.get(f"/admin/{model}/?p=999999999999999999999").status_code in (200, 302)
        assert staff_client.get(f"/admin/{model}/99999999999999999999/change/").status_code in (302, 404)


class TestQueryParametersAreExact:
    @pytest.mark.parametrize("query,field", [
        ("page_size=5&page_size=6", "page_size"), ("page_size=0", "page_size"), ("page_size=201", "page_size"),
        ("page_size=%EF%BC%95", "page_size"), ("status=OPEN&status=DEALT", "status"), ("status=", "status"),
        ("cursor=", "cursor"), ("cursor=%20%20", "cursor"), ("cursor=%1F", "cursor"), ("cursor=a&cursor=b", "cursor"),
    ])
    def test_each_is_one_well_formed_value(self, as_operator, query, field):
        assert field in assert_json(as_operator.get(f"{API}/rounds/?{query}"), 400)

    def test_a_cursor_the_api_did_not_give_out_is_a_documented_404(self, as_operator):
        assert "cursor" in assert_json(as_operator.get(f"{API}/rounds/?cursor=garbage"), 404)

    @pytest.mark.parametrize("cursor", [
        "%60%7B",  # outside the alphabet: base64 decoding skips both characters, an empty cursor
        "====", "AAAA",  # base64 of nothing, and of three NUL bytes: DRF reads both as the first page
        "cD0x%3D",  # "p=1" with padding the server does not write
        "cD0yJm89MQ%3D%3D",  # "p=2&o=1": its parts in an order the server does not write
    ])
    def test_a_cursor_the_api_does_not_write_is_no_page_not_the_first(self, as_operator, cursor):
        assert "cursor" in assert_json(as_operator.get(f"{API}/rounds/?cursor={cursor}"), 404)


class ThroughTheWsgiEntry:
    """A test client's handler given the environ as the WSGI entry (backoffice.wsgi) hands it on."""

    def __init__(self, handler):
        self.handler = handler

    def __call__(self, environ):
        return self.handler(declared_charset(environ))


def through_the_wsgi_entry(client):
    client.handler = ThroughTheWsgiEntry(client.handler)
    return client


class TestBodiesAreReadAsDeclared:
    """A body is read by its Content-Length, in UTF-8."""

    @staticmethod
    def bet(key="charset"):
        return json.dumps({"account": "player-1", "bet_type": "PLAYER", "stake": "10.00", "idempotency_key": key})

    @pytest.mark.parametrize("charset,body", [
        ("zlib", lambda text: zlib.compress(text.encode())),  # inflated 1,000-fold it would pass any size limit
        ("bz2", lambda text: bz2.compress(text.encode())),
        ("base64", lambda text: base64.b64encode(text.encode())),
        ("rot13", lambda text: codecs.encode(text, "rot13").encode()),
        ("latin-1", lambda text: text.encode("latin-1")),
        ("utf-16", lambda text: text.encode("utf-16")),
        ('"zlib"', lambda text: zlib.compress(text.encode())),
        ("utf-8; charset=zlib", lambda text: zlib.compress(text.encode())),  # the last one counts, as for Django
    ])
    @pytest.mark.parametrize("query", ["", "?a=1"])  # Django decodes a query string as it builds the request
    def test_an_api_body_in_any_charset_but_utf_8_is_a_json_415_and_writes_nothing(
            self, as_integration, open_round, player, unchanged, charset, body, query):
        client = through_the_wsgi_entry(as_integration)
        with unchanged():
            response = client.post(f"{API}/rounds/{open_round.pk}/bets/{query}", body(self.bet()),
                                   content_type=f"application/json; charset={charset}")
        assert "UTF-8" in assert_json(response, 415)["detail"]

    @pytest.mark.parametrize("charset", ["utf-8", "UTF8", '"UTF-8"', "us-ascii", "no-such-charset"])
    def test_utf_8_ascii_and_a_charset_python_does_not_know_are_read_as_utf_8(self, as_integration, open_round,
                                                                             player, charset):
        response = through_the_wsgi_entry(as_integration).post(
            f"{API}/rounds/{open_round.pk}/bets/", self.bet(), content_type=f"application/json;charset={charset}")
        assert assert_json(response, 201)["stake"] == "10.00"

    MULTIPART = (b'--b\r\nContent-Disposition: form-data; name="username"\r\n\r\nx\r\n'
                 b'--b\r\nContent-Disposition: form-data; name="password"\r\n\r\ny\r\n--b--\r\n')

    @pytest.mark.parametrize("content_type,body", [
        ("application/x-www-form-urlencoded", b"username=x&password=y"),
        ("multipart/form-data; boundary=b", MULTIPART),
    ])
    # punycode decodes in quadratic time: a 2.5 MB field would hold a worker for minutes.
    @pytest.mark.parametrize("charset", ["zlib", "idna", "undefined", "punycode", "latin-1"])
    def test_a_form_in_another_charset_is_a_415_page(self, staff_client, content_type, body, charset):
        response = through_the_wsgi_entry(staff_client).generic(
            "POST", "/admin/login/?next=/admin/", body, content_type=f"{content_type}; charset={charset}")
        assert_page(response, 415)

    def test_the_wsgi_entry_refuses_before_django_reads_the_query_string(self, django_assert_num_queries):
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/api/v1/games/", "QUERY_STRING": "a=1",
                   "CONTENT_TYPE": "text/plain; charset=zlib", "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80",
                   "HTTP_HOST": "127.0.0.1", "HTTP_X_FORWARDED_PROTO": "https", "wsgi.url_scheme": "https",
                   "wsgi.input": io.BytesIO(b""), "wsgi.errors": io.StringIO()}
        started = []
        # As the test client's handler does: the test's transaction is no connection to close.
        for signal in (request_started, request_finished):
            signal.disconnect(close_old_connections)
        try:
            with django_assert_num_queries(0):
                body = b"".join(application(environ, lambda status, headers: started.append((status, dict(headers)))))
        finally:
            for signal in (request_started, request_finished):
                signal.connect(close_old_connections)
        [(status, headers)] = started
        assert (status, headers["Content-Type"]) == ("415 Unsupported Media Type", "application/json")
        assert b"UTF-8" in body

    def test_a_chunked_api_body_is_a_json_411_and_writes_nothing(self, as_integration, open_round, player,
                                                                 unchanged):
        with unchanged():
            response = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", self.bet(),
                                           content_type="application/json", HTTP_TRANSFER_ENCODING="chunked")
        assert "Content-Length" in assert_json(response, 411)["detail"]

    def test_a_chunked_form_is_a_411_page(self, staff_client):
        assert_page(staff_client.post("/admin/login/", {"username": "x", "password": "y"},
                                      HTTP_TRANSFER_ENCODING="chunked"), 411)
