"""The settlement of dealt rounds."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db.models import Sum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase as HypothesisTestCase

from audit.models import AuditEvent
from backoffice.roles import Role
from core.errors import Conflict
from games import services as game_services
from games.choices import BetStatus, RoundStatus
from games.engine import bet_return, settlement_kind
from games.models import Bet, Round
from settlement import services
from settlement.models import SettlementBatch
from tests.conftest import make_user
from wallet import services as wallet_services
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEffect, LedgerEntry

pytestmark = pytest.mark.django_db


def assert_ledger_invariant():
    """Every balance equals the sum of its ledger, and each entry's balance_after runs on from the last."""
    for account in Account.objects.all():
        entries = list(account.ledger.order_by("pk"))
        running = Decimal("0")
        for entry in entries:
            running += entry.amount
            assert entry.balance_after == running, entry
        assert account.balance == running, account
        assert account.balance >= 0


def open_round_with_bets(game, integration, stakes):
    """stakes: [(external_id, bet_type, stake)] placed on a fresh round, which is then dealt."""
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    for i, (external_id, bet_type, stake) in enumerate(stakes):
        game_services.bet_place(round_id=round_.pk, account_external_id=external_id, bet_type=bet_type,
                                stake=stake, idempotency_key=f"{round_.pk}-{i}", client=integration)
    game_services.round_deal(round_id=round_.pk, actor=integration)
    round_.refresh_from_db()
    return round_


class TestSettlementRun:
    @pytest.mark.parametrize("one_statement", [True, False], ids=["one_statement", "plain_path"])
    def test_settles_every_bet_with_the_engine_payout_once(self, game, integration, funded_account, settings,
                                                           one_statement):
        settings.SETTLEMENT_BETS_IN_ONE_STATEMENT = one_statement
        for name in ("a", "b", "c"):
            funded_account(name, "1000.00")
        rounds = [
            open_round_with_bets(game, integration, [("a", "PLAYER", "10.00"), ("b", "BANKER", "10.01"),
                                                     ("c", "TIE", "7.77"), ("a", "BANKER", "3.33")])
            for _ in range(12)
        ]
        assert {r.status for r in rounds} == {RoundStatus.DEALT}  # no commit inside the test transaction
        batch = services.settlement_run(worker="test-worker")
        assert batch.rounds == 12 and batch.bets == 48
        assert services.settlement_run(worker="test-worker") is None  # nothing left: a second run is a no-op
        for bet in Bet.objects.select_related("round"):
            expected = bet_return(bet.bet_type, bet.stake, bet.round.outcome, bet.multiplier)
            assert bet.payout == expected
            assert bet.status == {"WIN": BetStatus.WON, "LOSE": BetStatus.LOST, "PUSH": BetStatus.PUSH}[
                settlement_kind(bet.bet_type, bet.round.outcome)]
            assert LedgerEntry.objects.filter(bet_id=bet.pk, kind=LedgerKind.PAYOUT).count() == (1 if expected else 0)
        assert set(Round.objects.values_list("status", flat=True)) == {RoundStatus.SETTLED}
        assert batch.total_paid == Bet.objects.aggregate(s=Sum("payout"))["s"]
        assert batch.total_staked == Bet.objects.aggregate(s=Sum("stake"))["s"]
        assert AuditEvent.objects.get(action="rounds.settled").after["rounds"] == sorted(r.pk for r in rounds)
        assert_ledger_invariant()
        # The batch kept the daily aggregates too: rebuilding them from the raw rows agrees.
        from django.core.management import call_command

        from settlement.models import DailyBetTotals

        assert DailyBetTotals.objects.aggregate(s=Sum("handle_cents"))["s"] == batch.total_staked * 100
        call_command("rebuild_aggregates", "--check")

    def test_limit_and_round_ids_select_what_is_claimed(self, game, integration, funded_account):
        funded_account("a", "100.00")
        rounds = [open_round_with_bets(game, integration, [("a", "TIE", "1.00")]) for _ in range(5)]
        first = services.settlement_run(round_ids=[rounds[3].pk], worker="w")
        assert first.round_ids == [rounds[3].pk]
        second = services.settlement_run(limit=2, worker="w")
        assert second.round_ids == [rounds[0].pk, rounds[1].pk]
        assert SettlementBatch.objects.count() == 2
        assert Round.objects.filter(status=RoundStatus.DEALT).count() == 2

    def test_voided_dealt_round_is_not_settled(self, game, integration, operator, funded_account):
        funded_account("a", "100.00")
        round_ = open_round_with_bets(game, integration, [("a", "PLAYER", "10.00")])
        game_services.round_void(round_id=round_.pk, actor=operator, reason="dealer error")
        assert services.settlement_run(worker="w") is None
        assert Bet.objects.get().status == BetStatus.REFUNDED
        assert Account.objects.get().balance == Decimal("100.00")
        assert_ledger_invariant()


class TestLedgerInvariant(HypothesisTestCase):
    """After any mix of operations, every balance equals the sum of its ledger and is never negative."""

    operation = st.one_of(
        st.tuples(st.just("adjust"), st.sampled_from(["a", "b"]), st.decimals("-60", "60", places=2)),
        st.tuples(st.just("bet"), st.sampled_from(["a", "b"]), st.sampled_from(["PLAYER", "BANKER", "TIE"]),
                  st.decimals("0.01", "80", places=2)),
        st.tuples(st.just("deal")),
        st.tuples(st.just("void")),
        st.tuples(st.just("settle")),
    )

    @settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(operation, min_size=1, max_size=25))
    def test_random_operations_keep_the_ledger_exact(self, operations):
        operator = make_user("op", Role.OPERATOR)
        integration = make_user("gs", Role.INTEGRATION)
        game = game_services.game_create(actor=operator, slug="g", name="G", min_bet=Decimal("0.01"),
                                         max_bet=Decimal("100"))
        for name in ("a", "b"):
            wallet_services.account_create(actor=operator, external_id=name)
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        for number, operation in enumerate(operations):
            try:
                if operation[0] == "adjust" and operation[2] != 0:
                    wallet_services.account_adjust(external_id=operation[1], actor=operator, amount=operation[2],
                                                   reason="r")
                elif operation[0] == "bet":
                    game_services.bet_place(round_id=round_.pk, account_external_id=operation[1],
                                            bet_type=operation[2], stake=operation[3],
                                            idempotency_key=str(number), client=integration)
                elif operation[0] == "deal":
                    game_services.round_deal(round_id=round_.pk, actor=integration)
                    round_ = game_services.round_open(game_id=game.pk, actor=integration)
                elif operation[0] == "void":
                    game_services.round_void(round_id=round_.pk, actor=operator, reason="r")
                    round_ = game_services.round_open(game_id=game.pk, actor=integration)
                elif operation[0] == "settle":
                    services.settlement_run(worker="w")
            except (ValidationError, Conflict):
                pass  # refused operations must leave everything as it was: checked below
            assert_ledger_invariant()
        services.settlement_run(worker="w")
        assert not Bet.objects.filter(round__status=RoundStatus.SETTLED, status=BetStatus.PENDING).exists()
        assert_ledger_invariant()


class TestQueue:
    def test_queue_counts_waiting_rounds_and_a_sweep_request_settles_them(
            self, game, integration, operator, funded_account, django_capture_on_commit_callbacks):
        from settlement.selectors import settlement_queue

        funded_account("a", "100.00")
        rounds = [open_round_with_bets(game, integration, [("a", "BANKER", "2.00")]) for _ in range(3)]
        queue = settlement_queue()
        assert queue.waiting_rounds == 3
        assert queue.oldest_dealt_at == rounds[0].dealt_at
        assert queue.oldest_age_seconds >= 0
        with django_capture_on_commit_callbacks(execute=True):
            services.sweep_request(actor=operator)
        assert settlement_queue().waiting_rounds == 0
        assert len(settlement_queue().recent_batches) == 1
        assert AuditEvent.objects.filter(action="settlement.sweep_requested", actor=operator.username).exists()

    def test_a_failing_round_is_isolated_and_its_failing_bets_held(self, game, integration, funded_account):
        from settlement.selectors import settlement_queue

        funded_account("a", "100.00")
        funded_account("p", "100.00")
        good = [open_round_with_bets(game, integration, [("a", "PLAYER", "1.00")]) for _ in range(2)]
        poison = open_round_with_bets(game, integration, [("p", kind, "1.00") for kind in ("PLAYER", "BANKER", "TIE")])
        # Payouts already on the ledger with their effects (as if written around the services):
        # whatever the outcome, settling this round would pay one of them twice, which the primary
        # key (bet, kind) of the ledger's effects refuses.
        for bet in Bet.objects.filter(round=poison):
            LedgerEntry.objects.create(account=bet.account, bet_id=bet.pk, kind=LedgerKind.PAYOUT,
                                       amount=Decimal("1.00"), balance_after=Decimal("98.00"))
            LedgerEffect.objects.create(bet_id=bet.pk, kind=LedgerKind.PAYOUT)
        result = services.settlement_sweep(worker="w")
        # The batch of three failed; each round alone: the good ones settle, the poison one fails
        # alone and is settled bet by bet: its paying bets are held, the losing one settles.
        assert result.settled_rounds == 3 and result.failed_batches == 1
        assert set(Round.objects.filter(pk__in=[r.pk for r in good]).values_list("status", flat=True)) == {"SETTLED"}
        poison.refresh_from_db()
        assert poison.status == RoundStatus.SETTLED
        paying = {bet.pk for bet in Bet.objects.filter(round=poison)
                  if bet_return(bet.bet_type, bet.stake, poison.outcome, bet.multiplier)}
        held = Bet.objects.filter(round=poison, status=BetStatus.HELD)
        assert paying and set(held.values_list("pk", flat=True)) == paying
        assert all("IntegrityError" in bet.hold_reason for bet in held)
        assert set(Bet.objects.filter(round=poison).exclude(pk__in=paying).values_list("status", flat=True)) <= {
            BetStatus.LOST}
        queue = settlement_queue()
        assert queue.stuck_rounds == 0 and queue.held_bets == len(paying)
        assert queue.failed_batches and "IntegrityError" in queue.failed_batches[0].error
        assert Account.objects.get(external_id="p").balance == Decimal("97.00")  # no payout applied
        assert services.settlement_sweep(worker="w").settled_rounds == 0


class TestDealtRoundsLeftToTheSweep:
    def test_inside_a_dealt_round_waits_for_the_sweep_and_after_it_settles_on_commit_again(
            self, game, integration, funded_account, django_capture_on_commit_callbacks):
        from settlement.receivers import dealt_rounds_left_to_the_sweep
        from settlement.tasks import sweep

        funded_account("a", "100.00")
        with dealt_rounds_left_to_the_sweep(), django_capture_on_commit_callbacks(execute=True):
            waiting = open_round_with_bets(game, integration, [("a", "BANKER", "2.00")])
        waiting.refresh_from_db()
        assert waiting.status == RoundStatus.DEALT
        assert sweep() == 1
        waiting.refresh_from_db()
        assert waiting.status == RoundStatus.SETTLED

        with django_capture_on_commit_callbacks(execute=True):
            settled_at_once = open_round_with_bets(game, integration, [("a", "PLAYER", "2.00")])
        settled_at_once.refresh_from_db()
        assert settled_at_once.status == RoundStatus.SETTLED
        assert_ledger_invariant()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("threshold", "mode"), [(3, "force_custom_plan"), (4, "auto")])
def test_a_large_batch_plans_its_statements_for_its_own_arrays(game, integration, funded_account, monkeypatch,
                                                               threshold, mode):
    # A prepared statement's generic plan guesses ten elements for an array: the bets' update of a
    # 10,000-bet batch took 4 s so. From CUSTOM_PLANS_FROM_BETS bets a batch plans for its own.
    from django.db import connection, transaction

    from settlement import writes
    from settlement.receivers import dealt_rounds_left_to_the_sweep

    funded_account("alice", "100.00")
    monkeypatch.setattr(writes, "CUSTOM_PLANS_FROM_BETS", threshold)
    modes, settle_bets = [], writes.settle_bets

    def noting_the_plan_mode(settled, **kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SHOW plan_cache_mode")
            modes.append(cursor.fetchone()[0])
        return settle_bets(settled, **kwargs)

    monkeypatch.setattr(writes, "settle_bets", noting_the_plan_mode)
    with dealt_rounds_left_to_the_sweep():
        round_ = open_round_with_bets(game, integration, [("alice", "PLAYER", "1.00"), ("alice", "BANKER", "1.00"),
                                                          ("alice", "TIE", "1.00")])
    with transaction.atomic():
        assert services.settlement_run(worker="w").bets == 3
        # Before the commit: its deferred foreign-key checks, one cached query a row, keep their plans.
        with connection.cursor() as cursor:
            cursor.execute("SHOW plan_cache_mode")
            assert cursor.fetchone()[0] == "auto"
    assert modes == [mode]
    assert Round.objects.get(pk=round_.pk).status == "SETTLED"
