"""The short way of a plain bet (backoffice.api.plain): which requests take it, that they take it,
and that every answer it gives (acceptance, replay and each kind of refusal) is the answer DRF's
dispatch gives the same request, headers and writes included."""

import json

import pytest
from django.db import transaction
from django.test import RequestFactory
from rest_framework.views import APIView

from apitokens.models import ApiToken
from apitokens.services import token_revoke
from audit.models import AuthEvent
from backoffice.api import plain, throttling
from games import services
from tests.api.helpers import API, Snapshot

pytestmark = pytest.mark.django_db

BODY = {"account": "player-1", "bet_type": "BANKER", "stake": "10.01", "idempotency_key": "key-1"}
# What the two ways must agree on beside the status and the body (X-Request-ID is new every time).
HEADERS = ("Content-Type", "Allow", "Vary", "WWW-Authenticate", "Retry-After", "X-Frame-Options",
           "X-Content-Type-Options", "Referrer-Policy", "Cross-Origin-Opener-Policy")


def plain_request(method="POST", **meta):
    meta = {"CONTENT_TYPE": "application/json", "HTTP_AUTHORIZATION": "Token abc", **meta}
    return RequestFactory().generic(method, "/api/v1/rounds/1/bets/", data=b'{"a": 1}',
                                    content_type=meta.pop("CONTENT_TYPE"), **meta)


class TestWhichRequestsArePlain:
    def test_a_token_post_of_a_json_body_accepting_json(self):
        assert plain.is_plain(plain_request())
        for accept in ("*/*", "application/json"):
            assert plain.is_plain(plain_request(HTTP_ACCEPT=accept)), accept
        assert plain.is_plain(plain_request(HTTP_AUTHORIZATION="token abc"))

    @pytest.mark.parametrize("meta", [
        {"CONTENT_TYPE": "application/json; charset=utf-8"}, {"CONTENT_TYPE": "text/plain"},
        {"HTTP_ACCEPT": "application/json; indent=4"}, {"HTTP_ACCEPT": "text/html"}, {"HTTP_ACCEPT": ""},
        {"HTTP_AUTHORIZATION": "Bearer abc"}, {"HTTP_AUTHORIZATION": ""}, {"QUERY_STRING": "format=json"},
        {"CONTENT_LENGTH": "0"}, {"CONTENT_LENGTH": "ten"}, {"CONTENT_LENGTH": "１０"},
    ])
    def test_anything_else_takes_drfs_dispatch(self, meta):
        assert not plain.is_plain(plain_request(**meta))

    def test_only_a_post(self):
        assert not plain.is_plain(plain_request("PUT"))


@pytest.fixture
def drf_calls(monkeypatch):
    """How many times DRF's dispatch ran."""
    calls = []
    dispatch = APIView.dispatch

    def counted(self, request, *args, **kwargs):
        calls.append(request)
        return dispatch(self, request, *args, **kwargs)

    monkeypatch.setattr(APIView, "dispatch", counted)
    return calls


def post(client, round_id, body, **extra):
    data = body if isinstance(body, bytes) else json.dumps(body)
    return client.post(f"{API}/rounds/{round_id}/bets/", data=data, content_type="application/json", **extra)


class TestTheShortWayIsTaken:
    def test_by_a_plain_bet_and_not_by_other_requests(self, as_integration, open_round, player, drf_calls):
        assert post(as_integration, open_round.pk, BODY).status_code == 201
        assert drf_calls == []
        again = post(as_integration, open_round.pk, BODY, HTTP_ACCEPT="application/json; indent=2")
        assert again.status_code == 200 and len(drf_calls) == 1

    def test_not_when_switched_off(self, as_integration, open_round, player, drf_calls, settings):
        settings.API_PLAIN_REQUESTS = False
        assert post(as_integration, open_round.pk, BODY).status_code == 201
        assert len(drf_calls) == 1

    def test_a_bad_token_or_a_missing_permission_is_left_to_drf(self, api_as, operator, open_round, player,
                                                              drf_calls):
        assert post(api_as(operator), open_round.pk, BODY).status_code == 403
        bad_token = post(api_as(None), open_round.pk, BODY, HTTP_AUTHORIZATION="Token nope")
        assert bad_token.status_code == 401
        assert len(drf_calls) == 2


class TestTheSameAnswerAsDrf:
    """Each request is sent the short way, its writes undone, then sent DRF's way."""

    CASES = {
        "accepted": BODY,
        "stake too precise": {**BODY, "stake": "10.001"},
        "stake as a float literal": b'{"account": "player-1", "bet_type": "BANKER", "stake": 1e400, '
                                    b'"idempotency_key": "k"}',
        "unknown field": {**BODY, "stak": "1"},
        "fields missing": {"account": "player-1"},
        "not an object": [1, 2],
        "malformed JSON": b'{"account": ',
        "NaN": b'{"account": "player-1", "bet_type": "BANKER", "stake": NaN, "idempotency_key": "k"}',
        "NUL in a field": {**BODY, "account": "a\u0000b"},
        "unknown account": {**BODY, "account": "nobody-here"},
        "over the balance": {**BODY, "stake": "600.00"},
        "over the table limit": {**BODY, "stake": "1000.01"},
    }

    @pytest.mark.parametrize("case", CASES)
    def test_every_case(self, case, as_integration, open_round, player, monkeypatch):
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, self.CASES[case]))

    @pytest.mark.parametrize("body", [BODY, {**BODY, "stake": "10.001"}])
    def test_an_empty_accept_header_is_not_acceptable(self, body, as_integration, open_round, player, monkeypatch):
        """DRF finds no acceptable type in it (406 before anything is counted or written)."""
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, body, HTTP_ACCEPT=""), status=406)

    def test_a_replay_and_a_conflicting_replay(self, as_integration, open_round, player, monkeypatch):
        assert post(as_integration, open_round.pk, BODY).status_code == 201
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, BODY), status=200)
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, {**BODY, "stake": "10.02"}),
                      status=409)

    def test_no_such_round_and_a_dealt_round(self, as_integration, open_round, player, integration, monkeypatch):
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk + 1000, BODY), status=404)
        services.round_deal(round_id=open_round.pk, actor=integration)
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, BODY), status=409)

    def test_an_inactive_user_and_a_deleted_token(self, as_integration, integration, open_round, player,
                                                  monkeypatch):
        integration.is_active = False
        integration.save()
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, BODY), status=401)
        ApiToken.objects.filter(pk=as_integration.api_token.pk).delete()
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, BODY), status=401)

    def test_a_revoked_an_expired_and_a_misplaced_token(self, as_integration, open_round, player, monkeypatch):
        token = as_integration.api_token
        ApiToken.objects.filter(pk=token.pk).update(allowed_ips=["192.0.2.0/24"])
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, BODY), status=401)
        ApiToken.objects.filter(pk=token.pk).update(allowed_ips=[], expires_at="2001-01-01T00:00:00Z")
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, BODY), status=401)
        token_revoke(token_id=token.pk, actor="system:tests")
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, BODY), status=401)

    def test_a_token_beyond_its_scopes_is_refused_and_logged_once(self, api_as, integration, open_round, player,
                                                                  monkeypatch):
        reader = api_as(integration, scopes=["read"])
        self._compare(monkeypatch, lambda: post(reader, open_round.pk, BODY), status=403)
        assert post(reader, open_round.pk, BODY).status_code == 403  # tried the short way, then DRF's
        events = AuthEvent.objects.filter(after__outcome="wrong_scope")
        assert events.count() == 1 and events.get().after["token_id"] == reader.api_token.pk

    def test_over_the_throttle(self, as_integration, open_round, player, monkeypatch, settings):
        """The short way counts the request once, and refuses the one over the rate as DRF does."""
        monkeypatch.setattr(throttling.time, "time", lambda: 1_800_000_030.0)
        settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "integration": "2/minute"}
        statuses = [post(as_integration, open_round.pk, {**BODY, "idempotency_key": f"k{n}"}).status_code
                    for n in range(2)]
        assert statuses == [201, 201]
        self._compare(monkeypatch, lambda: post(as_integration, open_round.pk, BODY), status=429)

    @staticmethod
    def _compare(monkeypatch, send, status=None):
        def answer_and_writes():
            before = Snapshot.take()
            with transaction.atomic():
                response = send()
                after = Snapshot.take()
                transaction.set_rollback(True)
            assert Snapshot.take() == before
            return response, after

        short, short_writes = answer_and_writes()
        with monkeypatch.context() as patched:
            patched.setattr(plain, "is_plain", lambda request, token_keyword: False)
            drf, drf_writes = answer_and_writes()
        if status is not None:
            assert short.status_code == status, short.content
        assert (short.status_code, volatile_removed(short)) == (drf.status_code, volatile_removed(drf))
        assert {name: short.get(name) for name in HEADERS} == {name: drf.get(name) for name in HEADERS}
        assert short_writes == drf_writes


def volatile_removed(response) -> dict | list:
    """The body, but for what two acceptances of one bet cannot share (its id and time)."""
    body = response.json()
    if response.status_code == 201:
        return {name: value for name, value in body.items() if name not in ("id", "placed_at")}
    return body
