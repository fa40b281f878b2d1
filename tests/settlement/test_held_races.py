"""Two operators settling the same held bet at once, on PostgreSQL with committed data: it is paid
once (the round's row lock orders them; the second finds it no longer held)."""

import pytest

from backoffice.roles import Role
from games.choices import BetStatus, RoundStatus
from games.models import Bet, Round
from settlement import services
from tests.conftest import make_user
from tests.races import conflict_codes, together
from tests.settlement.faults import BETS, AccountFault, offer_every_side_bet
from tests.settlement.test_services import assert_ledger_invariant, open_round_with_bets
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry

# The fault is a trigger on the accounts table, which only the tables' owner may create.
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.owner]


def test_two_operators_at_once_pay_a_held_bet_once(postgres, game, integration, funded_account, monkeypatch):
    offer_every_side_bet(game)
    accounts = {name: funded_account(name, "100.00") for name in ("alice", "bob", "carol")}
    # The trigger refuses credits only, so the stakes go through; the deal's settlement (run when
    # the deal commits) then fails on carol's payouts and holds them.
    fault = AccountFault(monkeypatch, accounts["carol"].pk).install()
    try:
        round_ = open_round_with_bets(game, integration, BETS)
    finally:
        fault.remove()
    assert Round.objects.get(pk=round_.pk).status == RoundStatus.SETTLED
    held = list(Bet.objects.filter(status=BetStatus.HELD).order_by("pk"))
    assert held and all(bet.account_id == accounts["carol"].pk for bet in held)
    operators = [make_user(f"operator-{n}", Role.OPERATOR) for n in range(2)]
    for bet in held:
        outcomes = together([
            lambda user=user, bet_id=bet.pk: services.held_bet_settle(bet_id=bet_id, actor=user, reason="fault fixed")
            for user in operators])
        assert conflict_codes(outcomes, "settled") == ["not_held", "settled"]
        assert LedgerEntry.objects.filter(bet_id=bet.pk, kind=LedgerKind.PAYOUT).count() == 1
    assert not Bet.objects.filter(status=BetStatus.HELD).exists()
    assert_ledger_invariant()
