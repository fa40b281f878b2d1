"""Two second persons approving the same request at once: it applies exactly once (PostgreSQL row lock)."""

from decimal import Decimal

import pytest

from approvals import services
from approvals.models import Approval
from backoffice.roles import Role
from tests.conftest import make_user
from tests.races import conflict_codes, together
from wallet import services as wallet_services
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_two_approvers_at_once_apply_the_adjustment_once(postgres, operator, funded_account):
    funded_account("whale", "0")
    approval = services.approval_gate(wallet_services.account_adjust, external_id="whale", actor=operator,
                                      amount="50000.00", reason="jackpot")
    approvers = [make_user(f"approver-{n}", Role.OPERATOR) for n in range(2)]
    outcomes = together([
        lambda user=user: services.approval_approve(approval_id=approval.pk, actor=user, reason="ok")
        for user in approvers])
    assert conflict_codes(outcomes, "applied") == ["applied", "approval_applied"]
    assert Account.objects.get(external_id="whale").balance == Decimal("50000.00")
    assert LedgerEntry.objects.filter(kind=LedgerKind.ADJUSTMENT, amount=Decimal("50000.00")).count() == 1
    assert Approval.objects.get().status == "applied"
