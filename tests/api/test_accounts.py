"""Accounts: open, balance, ledger, adjustments; every rejected request writing nothing."""

from decimal import Decimal

import pytest

from audit.models import AuditEvent
from tests.api.helpers import API, assert_names_field
from wallet.models import Account, LedgerEntry

pytestmark = pytest.mark.django_db


class TestCreate:
    def test_opens_an_account_with_a_zero_balance(self, as_integration, integration):
        response = as_integration.post(f"{API}/accounts/", {"external_id": "ext-42", "currency": "EUR"})
        assert response.status_code == 201, response.content
        assert response.json() == {**response.json(), "external_id": "ext-42", "currency": "EUR", "balance": "0.00"}
        assert Account.objects.get().currency == "EUR"
        assert AuditEvent.objects.filter(action="account.created", actor=integration.username).exists()

    def test_currency_defaults_to_usd(self, as_operator):
        assert as_operator.post(f"{API}/accounts/", {"external_id": "a@b.example"}).json()["currency"] == "USD"

    @pytest.mark.parametrize("field,value", [
        ("external_id", ""),
        ("external_id", "x" * 101),
        ("external_id", "with/slash"),
        ("external_id", "tab\tinside"),
        ("external_id", "player-1"),        # taken
        ("currency", "usd"),
        ("currency", "US"),
        ("currency", "DOLLAR"),
        ("balance", "100.00"),              # read-only: an account starts at zero
    ])
    def test_rejects_bad_input_and_writes_nothing(self, as_operator, player, unchanged, field, value):
        body = {"external_id": "new-player", "currency": "USD", field: value}
        with unchanged():
            response = as_operator.post(f"{API}/accounts/", body)
        assert_names_field(response, 400, field)

    def test_requires_an_external_id(self, as_operator, unchanged):
        with unchanged():
            assert_names_field(as_operator.post(f"{API}/accounts/", {"currency": "USD"}), 400, "external_id")


class TestRead:
    def test_detail_shows_the_balance(self, as_support, player):
        response = as_support.get(f"{API}/accounts/player-1/")
        assert response.status_code == 200
        assert response.json() == {**response.json(), "external_id": "player-1", "currency": "USD",
                                   "balance": "500.00"}

    def test_an_id_with_dots_and_at_signs(self, as_support, funded_account):
        funded_account("jane.doe@casino.example", "1.00")
        assert as_support.get(f"{API}/accounts/jane.doe@casino.example/").json()["balance"] == "1.00"

    def test_unknown_account_is_404(self, as_support):
        for suffix in ("", "ledger/"):
            assert as_support.get(f"{API}/accounts/nobody/{suffix}").status_code == 404

    def test_list_by_external_id(self, as_support, funded_account):
        for external_id in ("carol", "alice", "bob"):
            funded_account(external_id, "0")
        body = as_support.get(f"{API}/accounts/").json()
        assert [item["external_id"] for item in body["results"]] == ["alice", "bob", "carol"]

    def test_ledger_newest_first_and_paginated(self, as_support, as_operator, player):
        for amount in ("1.00", "-2.00", "3.00"):
            assert as_operator.post(f"{API}/accounts/player-1/adjust/",
                                    {"amount": amount, "reason": "test"}).status_code == 201
        body = as_support.get(f"{API}/accounts/player-1/ledger/", {"page_size": 3}).json()
        assert [(entry["kind"], entry["amount"], entry["balance_after"]) for entry in body["results"]] == [
            ("ADJUSTMENT", "3.00", "502.00"), ("ADJUSTMENT", "-2.00", "499.00"), ("ADJUSTMENT", "1.00", "501.00"),
        ]
        assert body["results"][0]["reason"] == "test" and body["results"][0]["bet"] is None
        rest = as_support.get(body["next"]).json()
        assert [entry["amount"] for entry in rest["results"]] == ["500.00"]

    def test_the_ledger_shows_stakes_with_their_bet(self, as_support, as_integration, open_round, player):
        bet = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", {
            "account": "player-1", "bet_type": "TIE", "stake": "2.50", "idempotency_key": "k"}).json()
        latest = as_support.get(f"{API}/accounts/player-1/ledger/").json()["results"][0]
        assert (latest["kind"], latest["amount"], latest["bet"], latest["balance_after"]) == (
            "STAKE", "-2.50", bet["id"], "497.50")


class TestAdjust:
    def test_credits_and_debits_with_a_reason(self, as_operator, player, operator):
        response = as_operator.post(f"{API}/accounts/player-1/adjust/", {"amount": "-100.50", "reason": "chargeback"})
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["account"]["balance"] == "399.50"
        assert body["entry"] == {**body["entry"], "kind": "ADJUSTMENT", "amount": "-100.50",
                                 "balance_after": "399.50", "reason": "chargeback", "bet": None}
        event = AuditEvent.objects.get(action="account.adjusted", reason="chargeback")
        assert event.actor == operator.username

    def test_may_empty_the_account(self, as_operator, player):
        response = as_operator.post(f"{API}/accounts/player-1/adjust/", {"amount": "-500.00", "reason": "close"})
        assert response.status_code == 201
        assert response.json()["account"]["balance"] == "0.00"

    @pytest.mark.parametrize("field,value", [
        ("amount", "0"),
        ("amount", "0.00"),
        ("amount", "1.001"),
        ("amount", "abc"),
        ("amount", "NaN"),
        ("amount", "-Infinity"),
        ("amount", None),
        ("amount", "-500.01"),            # the balance would go below zero
        ("reason", ""),
        ("reason", "   "),
        ("reason", None),
    ])
    def test_rejects_bad_input_and_writes_nothing(self, as_operator, player, unchanged, field, value):
        body = {"amount": "10.00", "reason": "goodwill", field: value}
        with unchanged():
            response = as_operator.post(f"{API}/accounts/player-1/adjust/", body)
        assert_names_field(response, 400, field)

    @pytest.mark.parametrize("field", ["amount", "reason"])
    def test_requires_both_fields(self, as_operator, player, unchanged, field):
        body = {"amount": "10.00", "reason": "goodwill"}
        del body[field]
        with unchanged():
            assert_names_field(as_operator.post(f"{API}/accounts/player-1/adjust/", body), 400, field)

    def test_unknown_account_is_404_and_writes_nothing(self, as_operator, unchanged):
        with unchanged():
            response = as_operator.post(f"{API}/accounts/nobody/adjust/", {"amount": "1.00", "reason": "x"})
        assert response.status_code == 404
        assert LedgerEntry.objects.count() == 0

    def test_the_balance_always_equals_the_ledger(self, as_operator, player):
        for amount in ("10.00", "-5.25", "0.01"):
            as_operator.post(f"{API}/accounts/player-1/adjust/", {"amount": amount, "reason": "r"})
        player.refresh_from_db()
        assert player.balance == sum(LedgerEntry.objects.filter(account=player).values_list("amount", flat=True))
        assert player.balance == Decimal("504.76")
