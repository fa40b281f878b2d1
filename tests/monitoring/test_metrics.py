"""/metrics: who may read it, and every metric moving with what it counts (in this process; the
gunicorn test sums them over workers)."""

from datetime import timedelta

import pytest
from celery import shared_task
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.exceptions import ValidationError as RequestValidationError

from alerts import services as alert_services
from alerts.checks import Finding
from approvals import services as approval_services
from audit.choices import AuditAction
from audit.services import audit_head_sign, audit_record
from core.errors import Conflict
from games import services as game_services
from games.models import Bet
from games.signals import bets_answered
from monitoring.receivers import count_bets, refusal_reason
from settlement.models import SettlementBatch
from settlement.signals import batch_failed
from tests.conftest import api_client_for
from tests.monitoring.helpers import TOKEN, parse, value
from wallet import services as wallet_services

API = "/api/v1"


@pytest.fixture
def scrape(settings):
    settings.METRICS_TOKEN = TOKEN

    def read() -> dict:
        response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
        assert response.status_code == 200, response.content
        assert response["Content-Type"].startswith("text/plain; version=0.0.4")
        return parse(response.content.decode())
    return read


@pytest.fixture
def as_integration(integration):
    return api_client_for(integration)


@pytest.fixture
def open_round(game, integration):
    return game_services.round_open(game_id=game.pk, actor=integration)


def bet(client, round_, key, **fields):
    body = {"account": "player-1", "bet_type": "BANKER", "stake": "10.00", "idempotency_key": key, **fields}
    return client.post(f"{API}/rounds/{round_.pk}/bets/", body, format="json")


class TestAccess:
    def test_refused_without_a_token_or_an_allowed_address(self, settings, db):
        settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = TOKEN, []
        response = Client().get("/metrics")
        assert response.status_code == 401
        assert response["WWW-Authenticate"].startswith("Bearer")
        assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
        assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Token {TOKEN}").status_code == 401

    def test_no_token_configured_refuses_even_an_empty_bearer(self, settings, db):
        settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", []
        assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 401

    def test_the_bearer_token_reads_it_from_any_host(self, settings, db):
        settings.METRICS_TOKEN = TOKEN
        settings.HTTPS_ONLY = settings.SECURE_SSL_REDIRECT = True
        response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", HTTP_HOST="10.0.3.7:8000")
        assert response.status_code == 200
        assert b"baccarat_metrics_database_up 1.0" in response.content

    def test_an_allowed_address_reads_it_without_a_token(self, settings, db):
        settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", ["10.1.0.0/16", "2001:db8::/32"]
        assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
        assert Client(REMOTE_ADDR="2001:db8::7").get("/metrics").status_code == 200
        assert Client(REMOTE_ADDR="10.2.0.1").get("/metrics").status_code == 401

    def test_behind_a_trusted_proxy_the_forwarded_address_counts(self, settings, db):
        settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", ["10.1.0.0/16"]
        settings.TRUSTED_PROXIES = ["192.0.2.1"]
        proxied = Client(REMOTE_ADDR="192.0.2.1")
        assert proxied.get("/metrics", HTTP_X_FORWARDED_FOR="10.1.2.3").status_code == 200
        assert proxied.get("/metrics", HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 401

    def test_off_it_is_not_there(self, settings, db):
        settings.METRICS_ENABLED, settings.METRICS_TOKEN = False, TOKEN
        assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 404


class TestBets:
    def test_accepted_refused_and_http_metrics_move_with_real_bets(self, scrape, as_integration, open_round,
                                                                   funded_account):
        funded_account("player-1", "100.00")
        before = scrape()
        assert bet(as_integration, open_round, "a").status_code == 201  # the plain path
        assert bet(as_integration, open_round, "b", bet_type="TIE").status_code == 201
        assert as_integration.post(f"{API}/rounds/{open_round.pk}/bets/?x=1", {  # DRF's dispatch
            "account": "player-1", "bet_type": "BANKER", "stake": "10.00", "idempotency_key": "c"},
            format="json").status_code == 201
        assert bet(as_integration, open_round, "a").status_code == 200  # a replay: not a new bet
        assert bet(as_integration, open_round, "d", stake="500.00").status_code == 400  # the balance
        assert bet(as_integration, open_round, "e", bet_type="DRAGON").status_code == 400
        assert bet(as_integration, open_round, "f", account="nobody").status_code == 400
        after = scrape()

        def moved(name, **labels):
            return value(after, name, **labels) - value(before, name, **labels)
        assert moved("baccarat_bets_accepted_total", game="main-table", bet_type="BANKER") == 2
        assert moved("baccarat_bets_accepted_total", game="main-table", bet_type="TIE") == 1
        assert moved("baccarat_bets_refused_total", reason="insufficient_balance") == 1
        assert moved("baccarat_bets_refused_total", reason="invalid_bet_type") == 1
        assert moved("baccarat_bets_refused_total", reason="invalid_account") == 1
        labels = {"view": "api:round-bets", "method": "POST"}
        assert moved("baccarat_http_request_duration_seconds_count", **labels, status="201") == 3
        assert moved("baccarat_http_request_duration_seconds_count", **labels, status="400") == 3
        assert moved("baccarat_http_request_queries_count", **labels) == 7
        assert moved("baccarat_http_request_queries_sum", **labels) >= 7

    def test_a_closed_round_refuses_by_its_code(self, scrape, as_integration, open_round, funded_account, integration):
        funded_account("player-1", "100.00")
        game_services.round_deal(round_id=open_round.pk, actor=integration)
        before = scrape()
        assert bet(as_integration, open_round, "late").status_code == 409
        missing = as_integration.post(f"{API}/rounds/999999/bets/", {
            "account": "player-1", "bet_type": "BANKER", "stake": "10.00", "idempotency_key": "x"}, format="json")
        assert missing.status_code == 404
        after = scrape()
        for reason in ("round_not_open", "round_not_found"):
            assert value(after, "baccarat_bets_refused_total", reason=reason) == value(
                before, "baccarat_bets_refused_total", reason=reason) + 1

    def test_bulk_requests_count_their_size_and_each_bet(self, scrape, as_integration, open_round, funded_account):
        funded_account("player-1", "100.00")
        before = scrape()
        items = [{"account": "player-1", "bet_type": "PLAYER", "stake": "10.00", "idempotency_key": f"k{n}"}
                 for n in range(3)]
        items.append({**items[0], "idempotency_key": "big", "stake": "95.00"})  # beyond what is left
        items.append({**items[0], "idempotency_key": "bad", "bet_type": "DRAGON"})
        response = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/bulk/", {"bets": items}, format="json")
        assert [item["status"] for item in response.json()["results"]] == [201, 201, 201, 400, 400]
        after = scrape()
        assert value(after, "baccarat_bet_bulk_request_size_count") == value(
            before, "baccarat_bet_bulk_request_size_count") + 1
        assert value(after, "baccarat_bet_bulk_request_size_sum") == value(
            before, "baccarat_bet_bulk_request_size_sum") + 5
        assert value(after, "baccarat_bets_accepted_total", game="main-table", bet_type="PLAYER") == value(
            before, "baccarat_bets_accepted_total", game="main-table", bet_type="PLAYER") + 3
        for reason in ("insufficient_balance", "invalid_bet_type"):
            assert value(after, "baccarat_bets_refused_total", reason=reason) == value(
                before, "baccarat_bets_refused_total", reason=reason) + 1

    def test_counting_a_bet_adds_no_query(self, as_integration, open_round, funded_account):
        funded_account("player-1", "100.00")
        bet(as_integration, open_round, "warm")  # the token's row read, statements prepared
        with CaptureQueriesContext(connection) as counted:
            assert bet(as_integration, open_round, "counted").status_code == 201
        bets_answered.disconnect(count_bets, sender=Bet, dispatch_uid="monitoring.count_bets")
        try:
            with CaptureQueriesContext(connection) as uncounted:
                assert bet(as_integration, open_round, "uncounted").status_code == 201
        finally:
            bets_answered.connect(count_bets, sender=Bet, dispatch_uid="monitoring.count_bets")
        assert len(counted) == len(uncounted)


class TestRefusalReasons:
    def test_each_kind_of_error_has_a_short_stable_reason(self):
        from django.core.exceptions import ValidationError
        from django.http import Http404

        from games.services import _balance_exceeded

        assert refusal_reason(Conflict("round", "closed", code="round_not_open")) == "round_not_open"
        assert refusal_reason(_balance_exceeded()) == "insufficient_balance"
        assert refusal_reason(ValidationError({"stake": "Must be between 1 and 10."})) == "invalid_stake"
        assert refusal_reason(RequestValidationError({"idempotency_key": ["bad"]})) == "invalid_idempotency_key"
        assert refusal_reason(RequestValidationError({"whatever-a-client-sent": ["bad"]})) == "invalid"
        assert refusal_reason(Http404()) == "round_not_found"
        assert refusal_reason(RuntimeError("boom")) == "error"


class TestDatabaseFigures:
    def test_backlogs_are_read_at_the_scrape(self, scrape, game, integration, operator, funded_account):
        funded_account("player-1", "100.00")
        dealt = game_services.round_open(game_id=game.pk, actor=integration)
        game_services.bet_place(round_id=dealt.pk, account_external_id="player-1", bet_type="PLAYER",
                                stake="5.00", idempotency_key="held", client=integration)
        # In the test's transaction the deal's settlement (on commit) never runs: the round waits.
        game_services.round_deal(round_id=dealt.pk, actor=integration)
        Bet.objects.filter(idempotency_key="held").update(status="HELD", hold_reason="test", held_at=timezone.now())
        type(dealt).objects.filter(pk=dealt.pk).update(dealt_at=timezone.now() - timedelta(seconds=90))
        funded_account("whale", "0")
        approval_services.approval_gate(wallet_services.account_adjust, external_id="whale", actor=operator,
                                        amount="20000.00", reason="Jackpot")
        alert_services.alert_raise(Finding("held_bets", "settlement", "critical", "1 bet held."))
        figures = scrape()
        assert value(figures, "baccarat_settlement_rounds_waiting") == 1
        assert 85 <= value(figures, "baccarat_settlement_oldest_wait_seconds") < 200
        assert value(figures, "baccarat_settlement_rounds_for_operators") == 0
        assert value(figures, "baccarat_bets_held") == 1
        assert value(figures, "baccarat_approvals_pending") == 1
        assert value(figures, "baccarat_alerts_open", kind="held_bets") == 1
        assert value(figures, "baccarat_alerts_open", kind="settlement_lag") == 0
        assert ("baccarat_alerts_open", (("kind", "settlement_lag"),)) in figures
        assert value(figures, "baccarat_webhook_deliveries", status="pending") == 0
        assert ("baccarat_webhook_deliveries", (("status", "failed"),)) in figures
        assert value(figures, "baccarat_audit_events_pending") >= 1  # this transaction's, not yet sequenced

    def test_the_head_age_is_infinite_until_a_head_is_signed(self, scrape, operator):
        assert value(scrape(), "baccarat_audit_head_age_seconds") == float("inf")
        audit_record(actor=operator, action=AuditAction.GAME_CREATED, object_type="game", object_id="1")
        audit_head_sign()
        figures = scrape()
        assert 0 <= value(figures, "baccarat_audit_head_age_seconds") < 60
        assert value(figures, "baccarat_audit_events_pending") == 0  # the signing sequenced them

    def test_the_readiness_checks_are_gauges(self, scrape, db):
        figures = scrape()
        assert [value(figures, "baccarat_readiness_check_ok", check=check)
                for check in ("database", "migrations", "broker", "cache")] == [1, 1, 1, 1]

    def test_an_unreadable_database_still_answers_with_the_processes_metrics(self, scrape, monkeypatch):
        from django.db import OperationalError

        from monitoring import collector

        def broken(using):
            raise OperationalError("gone")
        monkeypatch.setattr(collector, "read_figures", broken)
        figures = scrape()
        assert value(figures, "baccarat_metrics_database_up") == 0
        assert ("baccarat_settlement_rounds_waiting", ()) not in figures


@pytest.mark.django_db(transaction=True)
class TestSettlementAndTasks:
    def test_a_settled_round_gives_its_lag_a_batch_and_a_task_duration(self, scrape, game, integration,
                                                                        funded_account):
        funded_account("player-1", "100.00")
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        game_services.bet_place(round_id=round_.pk, account_external_id="player-1", bet_type="PLAYER",
                                stake="5.00", idempotency_key="settled", client=integration)
        before = scrape()
        game_services.round_deal(round_id=round_.pk, actor=integration)  # settled on commit, in-process
        round_.refresh_from_db()
        assert round_.status == "SETTLED"
        after = scrape()
        assert value(after, "baccarat_settlement_lag_seconds_count") == value(
            before, "baccarat_settlement_lag_seconds_count") + 1
        assert value(after, "baccarat_settlement_batches_total", outcome="ok") == value(
            before, "baccarat_settlement_batches_total", outcome="ok") + 1
        task = {"task": "settlement.settle_rounds", "queue": "eager"}
        assert value(after, "baccarat_celery_task_duration_seconds_count", **task) == value(
            before, "baccarat_celery_task_duration_seconds_count", **task) + 1

    def test_failures_of_a_batch_and_of_a_task_are_counted(self, scrape):
        before = scrape()
        batch_failed.send(sender=SettlementBatch, round_ids=[1])
        assert failing_task.apply(throw=False).failed()  # as a worker runs it (eager ones raise first)
        after = scrape()
        assert value(after, "baccarat_settlement_batches_total", outcome="failed") == value(
            before, "baccarat_settlement_batches_total", outcome="failed") + 1
        task = {"task": "tests.monitoring.failing", "queue": "eager"}
        assert value(after, "baccarat_celery_task_failures_total", **task) == value(
            before, "baccarat_celery_task_failures_total", **task) + 1


@shared_task(name="tests.monitoring.failing")
def failing_task():
    raise RuntimeError("a task that fails")


def test_an_allowed_address_that_is_not_one_stops_the_start(settings):
    from django.core.exceptions import ImproperlyConfigured

    from monitoring.middleware import ProbeMiddleware

    settings.METRICS_ALLOWED_IPS = ["10.0.0.0/8", "not-an-address"]
    with pytest.raises(ImproperlyConfigured, match="METRICS_ALLOWED_IPS"):
        ProbeMiddleware(lambda request: None)
