"""Four eyes decided under the locks of what the decision reads, on PostgreSQL: a void sent while a deal
commits, and an adjustment sent while another one commits, each made to wait at the lock the other
holds (tests.races.held_open), so that the race runs the same way every time."""

from decimal import Decimal

import pytest

from approvals.models import Approval
from backoffice.approval_gate import Done, Held, submit
from games import services as game_services
from games.choices import BetStatus, RoundStatus
from games.models import Bet, Round
from settlement.receivers import dealt_rounds_left_to_the_sweep
from tests.races import held_open, started, wait_for_lock_waiters
from wallet import services as wallet_services
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

RUNS = 10


@pytest.mark.parametrize("run", range(RUNS))
def test_a_void_sent_while_the_deal_commits_waits_for_a_second_person(postgres, operator, integration, game,
                                                                      funded_account, run):
    funded_account("p1", "100.00")
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.bet_place(round_id=round_.pk, account_external_id="p1", bet_type="BANKER", stake="10.00",
                            idempotency_key="k-1", client=integration)
    # The deal settles nothing on commit (in-process Celery would): the round stays DEALT for the void.
    with dealt_rounds_left_to_the_sweep(), held_open(
            lambda: game_services.round_deal(round_id=round_.pk, actor=integration), seconds=30):
        # The round is OPEN to any reader until the deal commits; the void comes to the round's lock.
        void = started(lambda: submit(game_services.round_void, round_id=round_.pk, actor=operator,
                                      reason="misdeal"))
        wait_for_lock_waiters()
        assert Round.objects.get(pk=round_.pk).status == RoundStatus.OPEN
    outcome = void.result(timeout=30)
    assert isinstance(outcome, Held), outcome  # decided once locked: the round was DEALT by then
    assert Round.objects.get(pk=round_.pk).status == RoundStatus.DEALT
    assert Approval.objects.get().action == "round.void"
    assert not Bet.objects.filter(status=BetStatus.REFUNDED).exists()
    assert not LedgerEntry.objects.filter(kind=LedgerKind.REFUND).exists()


@pytest.mark.parametrize("run", range(RUNS))
def test_a_void_of_an_open_round_decided_open_voids_it_before_any_deal(postgres, operator, integration, game, run):
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    with held_open(lambda: submit(game_services.round_void, round_id=round_.pk, actor=operator, reason="x"),
                   seconds=30):
        deal = started(lambda: game_services.round_deal(round_id=round_.pk, actor=integration))
        wait_for_lock_waiters()
    assert deal.exception(timeout=30) is not None  # the round was VOID once the deal had its lock
    assert Round.objects.get(pk=round_.pk).status == RoundStatus.VOID
    assert not Approval.objects.exists()


@pytest.mark.parametrize("run", range(RUNS))
def test_an_adjustment_sent_while_another_commits_counts_it_in_the_window(postgres, operator, funded_account, run):
    funded_account("p1", "0")

    def adjust():
        return submit(wallet_services.account_adjust, external_id="p1", actor=operator, amount="9999.99",
                      reason="bonus")

    with held_open(adjust, seconds=30):  # applied (the window was empty), not yet committed
        second = started(adjust)
        wait_for_lock_waiters()
    assert isinstance(second.result(timeout=30), Held)  # 19,999.98 over the window: a second person
    assert Account.objects.get(external_id="p1").balance == Decimal("9999.99")
    assert Approval.objects.get().changes["adjusted_in_window"] == {"before": "9999.99", "after": "19999.98"}


def test_an_adjustment_needing_nobody_runs_in_the_transaction_that_decided(postgres, operator, funded_account):
    funded_account("p1", "0")
    outcome = submit(wallet_services.account_adjust, external_id="p1", actor=operator, amount="10.00", reason="x")
    assert isinstance(outcome, Done) and outcome.result.amount == Decimal("10.00")
