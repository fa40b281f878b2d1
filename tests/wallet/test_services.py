"""Accounts and manual adjustments."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from audit.models import AuditEvent
from tests.settlement.test_services import assert_ledger_invariant
from wallet import services
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

pytestmark = pytest.mark.django_db


class TestAdjust:
    def test_credit_and_debit_with_reason(self, operator, funded_account):
        funded_account("p1", "0")
        services.account_adjust(external_id="p1", actor=operator, amount="25.50", reason="deposit")
        entry = services.account_adjust(external_id="p1", actor=operator, amount="-5.50", reason="withdrawal")
        assert (entry.kind, entry.amount, entry.balance_after) == (
            LedgerKind.ADJUSTMENT, Decimal("-5.50"), Decimal("20.00"))
        assert Account.objects.get(external_id="p1").balance == Decimal("20.00")
        event = AuditEvent.objects.filter(action="account.adjusted").order_by("pk").last()
        assert (event.reason, event.before, event.after["balance"]) == ("withdrawal", {"balance": "25.50"}, "20.00")
        assert_ledger_invariant()

    @pytest.mark.parametrize("amount,reason,field", [
        ("-0.01", "overdraw", "amount"),
        ("0", "nothing", "amount"),
        ("1.001", "places", "amount"),
        ("Infinity", "inf", "amount"),
        ("abc", "nan", "amount"),
        ("5.00", "", "reason"),
    ])
    def test_bad_adjustments_write_nothing(self, operator, funded_account, amount, reason, field):
        funded_account("p1", "0")
        with pytest.raises(ValidationError) as error:
            services.account_adjust(external_id="p1", actor=operator, amount=amount, reason=reason)
        assert field in error.value.message_dict
        assert not LedgerEntry.objects.exists()
        assert Account.objects.get(external_id="p1").balance == 0

    def test_account_create_validates_currency(self, operator):
        with pytest.raises(ValidationError) as error:
            services.account_create(actor=operator, external_id="p9", currency="euro")
        assert "currency" in error.value.message_dict
        assert not Account.objects.exists()
