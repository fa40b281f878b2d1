"""Held bets: a bet whose writes fail is isolated (HELD, with its reason) while the others of its
round are paid; an operator settles it later, once; the aggregates count it only then."""

import re
from decimal import Decimal

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ValidationError

from alerts import checks
from audit.models import AuditEvent
from core.errors import Conflict
from games.choices import BetStatus, RoundStatus
from games.models import Bet, Round
from settlement import aggregates, services
from settlement.models import DailyBetTotals, SettlementBatch
from settlement.selectors import settlement_queue
from tests.aggregates_helpers import brute_force, returning_brute_force, returning_stored, stored
from tests.games.engine.side_bet_oracle import EVENT_OF
from tests.settlement.faults import BETS, MESSAGE, held_round  # noqa: F401
from tests.settlement.test_services import assert_ledger_invariant, open_round_with_bets
from tests.settlement.test_side_bets_end_to_end import expected_payout, oracle_round
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

# The fault is a trigger on the accounts table, which only the tables' owner may create.
pytestmark = [pytest.mark.django_db, pytest.mark.owner]


def assert_aggregates_match_the_raw_rows():
    expected_bets, expected_rounds, expected_accounts = brute_force()
    stored_bets, stored_rounds, stored_accounts = stored()
    assert stored_rounds == expected_rounds
    assert stored_accounts == expected_accounts
    assert stored_bets == expected_bets
    assert returning_stored() == returning_brute_force(expected_accounts)


def expected_return(bet: Bet, _outcome: str) -> Decimal:
    """By the tests' own oracle on the dealt cards, for main and side bets alike."""
    return expected_payout(bet, EVENT_OF[bet.bet_type](oracle_round(bet.round)))


def test_the_failing_bets_are_held_and_every_other_bet_is_paid(held_round):  # noqa: F811
    round_, carol = held_round["round"], held_round["accounts"]["carol"]
    assert held_round["result"].settled_rounds == 1 and held_round["result"].failed_batches == 0
    assert round_.status == RoundStatus.SETTLED and round_.settlement_failures == 0
    held = []
    for bet in Bet.objects.filter(round=round_).order_by("pk"):
        returned = expected_return(bet, round_.outcome)
        if bet.account_id == carol.pk and returned:
            assert bet.status == BetStatus.HELD and bet.payout is None and bet.settled_at is None
            assert re.match(r"\w+Error: ", bet.hold_reason) and MESSAGE in bet.hold_reason
            assert bet.held_at == round_.settled_at
            assert not LedgerEntry.objects.filter(bet_id=bet.pk, kind=LedgerKind.PAYOUT).exists()
            held.append(bet.pk)
            continue
        assert bet.status in (BetStatus.WON, BetStatus.LOST, BetStatus.PUSH)
        assert bet.payout == returned and bet.settled_at == round_.settled_at
        assert LedgerEntry.objects.filter(bet_id=bet.pk, kind=LedgerKind.PAYOUT).count() == (1 if returned else 0)
    assert held  # carol always has a paying bet
    assert_ledger_invariant()
    stakes = sum(Decimal(stake) for name, _kind, stake in BETS if name == "carol")
    assert Account.objects.get(pk=carol.pk).balance == Decimal("100.00") - stakes  # nothing paid to carol
    event = AuditEvent.objects.get(action="settlement.bets_held")
    assert event.object_id == str(round_.pk) and sorted(map(int, event.after["held"])) == held
    [batch] = SettlementBatch.objects.all()
    assert batch.outcome == "ok" and batch.bets == len(BETS) - len(held) and "Held bets" in batch.error
    # The aggregates count the others only.
    assert sum(DailyBetTotals.objects.values_list("bets", flat=True)) == len(BETS) - len(held)
    assert_aggregates_match_the_raw_rows()
    assert settlement_queue().held_bets == len(held)
    [finding] = checks.held_bets()
    assert finding.kind == "held_bets" and finding.details == {"held_bets": len(held), "bet_ids": held}
    assert services.settlement_sweep(worker="w").settled_rounds == 0  # nothing left to settle


def test_an_operator_settles_a_held_bet_once_after_the_fault_is_gone(held_round, operator):  # noqa: F811
    round_ = held_round["round"]
    held = list(Bet.objects.filter(status=BetStatus.HELD).order_by("pk"))
    # While the fault remains, the bet stays held, with the new attempt's reason.
    with pytest.raises(Conflict) as refused:
        services.held_bet_settle(bet_id=held[0].pk, actor=operator, reason="retry")
    assert refused.value.code == "held" and MESSAGE in refused.value.message
    held[0].refresh_from_db()
    assert held[0].status == BetStatus.HELD and MESSAGE in held[0].hold_reason
    assert AuditEvent.objects.filter(action="settlement.bets_held", actor=operator.username).exists()
    with pytest.raises(ValidationError):
        services.held_bet_settle(bet_id=held[0].pk, actor=operator, reason="  ")
    before = stored()
    held_round["fault"].remove()
    for bet in held:
        settled = services.held_bet_settle(bet_id=bet.pk, actor=operator, reason="fault fixed")
        returned = expected_return(bet, round_.outcome)
        assert settled.status in (BetStatus.WON, BetStatus.PUSH) and settled.payout == returned
        assert LedgerEntry.objects.filter(bet_id=bet.pk, kind=LedgerKind.PAYOUT, amount=returned).count() == 1
    assert_ledger_invariant()
    assert stored() != before
    assert_aggregates_match_the_raw_rows()  # now counted, on the round's settlement day
    assert sum(DailyBetTotals.objects.values_list("bets", flat=True)) == len(BETS)
    assert AuditEvent.objects.filter(action="settlement.held_bet_settled").count() == len(held)
    # A second settlement is refused; nothing is paid twice.
    with pytest.raises(Conflict) as again:
        services.held_bet_settle(bet_id=held[0].pk, actor=operator, reason="again")
    assert again.value.code == "not_held"
    assert LedgerEntry.objects.filter(bet_id=held[0].pk, kind=LedgerKind.PAYOUT).count() == 1
    assert checks.held_bets() == [] and settlement_queue().held_bets == 0


def test_a_settled_bet_keeps_its_hold_reason_as_history(held_round, operator):  # noqa: F811
    bet = Bet.objects.filter(status=BetStatus.HELD).first()
    held_round["fault"].remove()
    settled = services.held_bet_settle(bet_id=bet.pk, actor=operator, reason="fault fixed")
    assert settled.hold_reason == bet.hold_reason and settled.held_at == bet.held_at


def test_only_held_bets_can_be_settled_by_an_operator(game, integration, funded_account, operator):
    funded_account("alice", "100.00")
    round_ = open_round_with_bets(game, integration, [("alice", "PLAYER", "1.00")])
    bet = Bet.objects.get(round=round_)
    with pytest.raises(Conflict):  # pending: settlement's own business
        services.held_bet_settle(bet_id=bet.pk, actor=operator, reason="why not")
    services.settlement_sweep(worker="w")
    with pytest.raises(Conflict):
        services.held_bet_settle(bet_id=bet.pk, actor=operator, reason="why not")
    with pytest.raises(Bet.DoesNotExist):
        services.held_bet_settle(bet_id=987654, actor=operator, reason="why not")


def test_a_round_that_fails_even_bet_by_bet_is_left_as_before(game, integration, funded_account, monkeypatch):
    """A failure of the round itself (here its aggregates) fails both paths: a failed batch, a counted
    failure each time, and the round left for operators after MAX_SETTLEMENT_FAILURES."""
    funded_account("alice", "100.00")
    good = open_round_with_bets(game, integration, [("alice", "PLAYER", "1.00")])
    poison = open_round_with_bets(game, integration, [("alice", "BANKER", "1.00")])
    record = aggregates.record_settled_rounds

    def failing(round_ids, **kwargs):
        if poison.pk in list(round_ids):
            raise RuntimeError("the round's aggregates cannot be written")
        return record(round_ids, **kwargs)

    monkeypatch.setattr(aggregates, "record_settled_rounds", failing)
    result = services.settlement_sweep(worker="w")
    assert result.settled_rounds == 1
    assert Round.objects.get(pk=good.pk).status == RoundStatus.SETTLED
    poison.refresh_from_db()
    assert poison.status == RoundStatus.DEALT
    assert poison.settlement_failures == django_settings.MAX_SETTLEMENT_FAILURES
    assert Bet.objects.get(round=poison).status == BetStatus.PENDING
    failed = SettlementBatch.objects.filter(outcome="failed")
    assert failed.exists() and all("RuntimeError" in batch.error for batch in failed)
    assert not Bet.objects.filter(status=BetStatus.HELD).exists()
    assert_ledger_invariant()


def test_the_hold_reason_names_the_error_and_never_a_seed():
    seed = "ab" * 32
    reason = services.hold_reason(RuntimeError(f"row (7, {seed}) refused\nCONTEXT: more"))
    assert reason.startswith("RuntimeError: row (7, ") and seed not in reason and "CONTEXT" not in reason
    assert services.hold_reason(ValueError()) == "ValueError"
    assert len(services.hold_reason(ValueError("x" * 5000))) == services.HOLD_REASON_LENGTH


def test_the_database_ties_held_to_a_reason(game, integration, funded_account):
    from django.db import IntegrityError, transaction
    from django.utils import timezone

    funded_account("alice", "100.00")
    round_ = open_round_with_bets(game, integration, [("alice", "PLAYER", "1.00")])
    bet = Bet.objects.get(round=round_)
    with pytest.raises(IntegrityError), transaction.atomic():
        Bet.objects.filter(pk=bet.pk).update(status=BetStatus.HELD, held_at=timezone.now())
    with pytest.raises(IntegrityError), transaction.atomic():
        Bet.objects.filter(pk=bet.pk).update(status=BetStatus.HELD, hold_reason="x")
    Bet.objects.filter(pk=bet.pk).update(status=BetStatus.HELD, hold_reason="x", held_at=timezone.now())
