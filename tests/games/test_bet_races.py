"""Bet intake under races, on the real PostgreSQL: many connections at once, each in its own thread.

The round is held FOR SHARE by bets and FOR NO KEY UPDATE by deal and void (games/locks.py); the
balance by the account's row; the idempotency key by the primary key of BetKey. These tests show each
holds when requests arrive together, single bets both through their one statement and through the
plain path (``bet_path``), and count the statements of a new bet.
"""

import time
from decimal import Decimal

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import Sum
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from audit.choices import AuditAction
from audit.context import request_context
from audit.models import AuditEvent, AuditLeaf
from core.errors import Conflict
from games import services
from games.choices import BetStatus, RoundStatus
from games.models import Bet, Round
from settlement.services import settlement_sweep
from tests.audit.helpers import sequence_all
from tests.races import together
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture(params=[True, False], ids=["one statement", "plain path"])
def bet_path(request, settings):
    """Single bets through their one statement, or through the plain path (BET_IN_ONE_STATEMENT off)."""
    settings.BET_IN_ONE_STATEMENT = request.param


def place(round_id, client, key, account="p1", stake="10.00", bet_type="PLAYER"):
    return lambda: services.bet_place(round_id=round_id, account_external_id=account, bet_type=bet_type,
                                      stake=stake, idempotency_key=key, client=client)


def assert_ledger_matches_balances():
    for account in Account.objects.all():
        total = LedgerEntry.objects.filter(account=account).aggregate(total=Sum("amount"))["total"]
        assert total == account.balance, account.external_id
        last = LedgerEntry.objects.filter(account=account).order_by("-id").first()
        assert last.balance_after == account.balance


def test_many_bets_of_one_account_on_one_round_spend_its_balance_exactly_once(postgres, game, integration,
                                                                              funded_account, bet_path):
    funded_account("p1", "100.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)
    outcomes = together([place(round_.pk, integration, f"k{index}") for index in range(16)])
    accepted = [outcome for outcome in outcomes if isinstance(outcome, tuple)]
    refused = [outcome for outcome in outcomes if not isinstance(outcome, tuple)]
    assert len(accepted) == 10 and all(created for _, created in accepted)
    assert all(isinstance(error, ValidationError) and "stake" in error.message_dict for error in refused)
    assert Account.objects.get(external_id="p1").balance == 0
    stakes = LedgerEntry.objects.filter(kind=LedgerKind.STAKE)
    assert sorted(entry.balance_after for entry in stakes) == [Decimal(10 * n) for n in range(10)]
    assert_ledger_matches_balances()


def test_bets_of_many_accounts_on_one_round_go_on_together(postgres, game, integration, funded_account, bet_path):
    for index in range(12):
        funded_account(f"p{index}", "50.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)
    outcomes = together([place(round_.pk, integration, f"k{index}", account=f"p{index}") for index in range(12)])
    assert all(isinstance(outcome, tuple) and outcome[1] for outcome in outcomes), outcomes
    assert Bet.objects.filter(round=round_).count() == 12
    assert_ledger_matches_balances()


@pytest.mark.parametrize("closing", ["deal", "void"])
def test_a_round_that_closes_while_bets_arrive_takes_none_after_it(postgres, game, integration, operator,
                                                                  funded_account, closing, bet_path):
    """Every bet is either in the round before it closed (and so settled or refunded with it) or refused."""
    for index in range(8):
        funded_account(f"p{index}", "1000.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)

    def bettor(index):
        def run():
            answers = []
            for attempt in range(12):
                try:
                    answers.append(place(round_.pk, integration, f"k{index}-{attempt}", account=f"p{index}")())
                except Conflict as conflict:
                    answers.append(conflict)
            return answers
        return run

    def close():
        deadline = time.monotonic() + 30  # let the first bets in (a fixed pause let none in under load)
        while not Bet.objects.filter(round=round_).exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        if closing == "deal":
            return services.round_deal(round_id=round_.pk, actor=integration)
        return services.round_void(round_id=round_.pk, actor=operator, reason="race")

    *answers, closed = together([bettor(index) for index in range(8)] + [close])
    assert isinstance(closed, Round), closed
    flat = [answer for per_bettor in answers for answer in per_bettor]
    accepted = [answer[0].pk for answer in flat if isinstance(answer, tuple)]
    refused = [answer for answer in flat if isinstance(answer, Conflict)]
    assert len(accepted) + len(refused) == len(flat)
    assert accepted and refused, "the race should have bets on both sides of the close"
    assert all(conflict.code == "round_not_open" for conflict in refused)
    for per_bettor in answers:  # once refused, a bettor's later bets are refused too
        kinds = [isinstance(answer, tuple) for answer in per_bettor]
        assert kinds == sorted(kinds, reverse=True)
    if closing == "deal":
        # Settling reads the round's bets once: any bet that slipped in after the deal stays PENDING.
        settlement_sweep(round_ids=[round_.pk])
    round_.refresh_from_db()
    assert round_.status == (RoundStatus.SETTLED if closing == "deal" else RoundStatus.VOID)
    assert not Bet.objects.filter(round=round_, status=BetStatus.PENDING).exists()
    assert sorted(Bet.objects.filter(round=round_).values_list("pk", flat=True)) == sorted(accepted)
    if closing == "void":
        assert set(Account.objects.values_list("balance", flat=True)) == {Decimal("1000.00")}
    assert_ledger_matches_balances()


def test_the_same_key_in_single_and_bulk_requests_at_once_is_one_bet(postgres, game, integration,
                                                                    funded_account, bet_path):
    funded_account("p1", "1000.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)
    shared = {"account_external_id": "p1", "bet_type": "BANKER", "stake": "10.00", "idempotency_key": "shared"}

    def bulk(index):
        own = {**shared, "idempotency_key": f"own-{index}"}
        return lambda: services.bets_place(round_id=round_.pk, items={0: own, 1: shared}, client=integration)

    outcomes = together([place(round_.pk, integration, "shared", bet_type="BANKER") for _ in range(6)]
                        + [bulk(index) for index in range(6)])
    singles, bulks = outcomes[:6], outcomes[6:]
    assert all(isinstance(outcome, tuple) for outcome in singles), singles
    assert all(isinstance(outcome, dict) for outcome in bulks), bulks
    shared_answers = [(bet.pk, created) for bet, created in singles] + [
        (outcome[1].bet.pk, outcome[1].created) for outcome in bulks]
    assert len({bet_id for bet_id, _ in shared_answers}) == 1
    assert sum(created for _, created in shared_answers) == 1
    assert all(outcome[0].created for outcome in bulks)
    assert Bet.objects.filter(idempotency_key="shared").count() == 1
    assert LedgerEntry.objects.filter(kind=LedgerKind.STAKE).count() == 7
    assert Account.objects.get(external_id="p1").balance == Decimal("930.00")
    assert_ledger_matches_balances()


def test_bulk_requests_racing_on_one_account_never_overspend(postgres, game, integration, funded_account):
    funded_account("p1", "100.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)

    def bulk(index):
        items = {n: {"account_external_id": "p1", "bet_type": "TIE", "stake": "10.00",
                     "idempotency_key": f"b{index}-{n}"} for n in range(4)}
        return lambda: services.bets_place(round_id=round_.pk, items=items, client=integration)

    outcomes = together([bulk(index) for index in range(4)] + [place(round_.pk, integration, f"s{n}")
                                                                for n in range(4)])
    bulk_accepted = sum(item.created for outcome in outcomes[:4] for item in outcome.values())
    single_accepted = sum(isinstance(outcome, tuple) for outcome in outcomes[4:])
    assert bulk_accepted + single_accepted == 10
    assert Account.objects.get(external_id="p1").balance == 0
    assert_ledger_matches_balances()


def test_a_new_bet_is_one_statement_and_no_transaction_around_it(postgres, game, integration, funded_account):
    """The checks and the write (debit, bet, stake entry and audit event) are one statement, which is
    its own transaction: no read before it, no BEGIN or COMMIT round trip. What runs after its commit
    (the audit sequencer) is not part of it."""
    funded_account("p1", "100.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)
    assert connection.get_autocommit() and not connection.in_atomic_block
    with override_settings(AUDIT_SEQUENCE_ON_COMMIT=False), CaptureQueriesContext(connection) as bet:
        services.bet_place(round_id=round_.pk, account_external_id="p1", bet_type="TIE", stake="1.00",
                           idempotency_key="counted", client=integration)
    own = [query["sql"] for query in bet.captured_queries]
    assert len(own) == 1, own
    assert f"FROM {Round._meta.db_table} r" in own[0], own
    assert f"INSERT INTO {LedgerEntry._meta.db_table}" in own[0], own
    assert not any(sql in ("BEGIN", "COMMIT") for sql in own), own
    # No lock wider than the round's shared gate and the rows the bet changes.
    assert not any("FOR UPDATE" in sql or "pg_advisory_xact_lock(" in sql for sql in own), own
    assert sum("FOR SHARE" in sql for sql in own) == 1, own
    assert Bet.objects.get(idempotency_key="counted").status == BetStatus.PENDING
    assert Account.objects.get(external_id="p1").balance == Decimal("99.00")


def test_the_new_bet_is_the_stored_row_with_its_relations_loaded(postgres, game, integration, funded_account):
    """The bet the statement answers is built without reading it back: each field is what was stored,
    and what its representation reads of the round, game, account and client needs no query."""
    funded_account("p1", "100.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)
    bet, created = services.bet_place(round_id=round_.pk, account_external_id="p1", bet_type="BANKER",
                                      stake="2.50", idempotency_key="as-stored", client=integration)
    assert created and not bet._state.adding
    stored = Bet.objects.get(pk=bet.pk)
    assert {field.attname: getattr(bet, field.attname) for field in Bet._meta.concrete_fields} == {
        field.attname: getattr(stored, field.attname) for field in Bet._meta.concrete_fields}
    with CaptureQueriesContext(connection) as reads:
        related = (bet.round.pk, bet.round.game.slug, bet.account.external_id, bet.account.balance,
                   bet.client.username)
    assert related == (round_.pk, game.slug, "p1", Decimal("97.50"), integration.username)
    assert reads.captured_queries == []


def test_the_bet_s_own_audit_event_is_the_one_audit_record_would_write(postgres, game, integration,
                                                                        funded_account):
    funded_account("p1", "100.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)
    with request_context("req-bet", "198.51.100.4"):
        bet, created = services.bet_place(round_id=round_.pk, account_external_id="p1", bet_type="TIE",
                                          stake="1.50", idempotency_key="audited", client=integration)
    assert created
    event = AuditEvent.objects.get(object_type="bet", object_id=str(bet.pk))
    assert (event.actor, event.actor_user_id, event.action, event.before, event.reason) == (
        integration.username, integration.pk, AuditAction.BET_ACCEPTED, None, "")
    assert event.after == {"round": round_.pk, "account": "p1", "bet_type": "TIE", "stake": "1.50",
                           "multiplier": str(bet.multiplier)}
    assert (event.request_id, event.source_ip) == ("req-bet", "198.51.100.4")
    assert event.xact_id is not None
    sequence_all()
    assert AuditLeaf.objects.filter(event=event).exists()


@pytest.mark.skipif(settings.DATABASE_POOLER == "transaction", reason="behind a transaction pooler nothing is prepared")
def test_a_bet_s_statements_are_prepared_once_run_a_few_times(postgres, game, integration, funded_account):
    """Planned once per connection (DATABASE_PREPARE_THRESHOLD), not on every bet."""
    funded_account("p1", "100.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)
    for index in range(6):
        services.bet_place(round_id=round_.pk, account_external_id="p1", bet_type="TIE", stake="1.00",
                           idempotency_key=f"prepared-{index}", client=integration)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [statement for (statement,) in cursor.fetchall()]
    assert any(f"FROM {Round._meta.db_table} r" in statement for statement in prepared), prepared
    assert any(f"INSERT INTO {LedgerEntry._meta.db_table}" in statement for statement in prepared), prepared


def test_bulk_requests_sharing_keys_in_opposite_orders_do_not_deadlock(postgres, game, integration,
                                                                      funded_account):
    # Each request inserts its bets in the order of their keys, whatever the order sent: two requests
    # that hold the same keys in opposite orders (on different accounts, so neither waits on the
    # other's balance) would otherwise each wait at the unique index for a key the other inserted.
    funded_account("p1", "100000.00")
    funded_account("p2", "100000.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)
    keys = [f"k{n:03d}" for n in range(300)]

    def bulk(account, ordered):
        items = {index: {"account_external_id": account, "bet_type": "TIE", "stake": "1.00", "idempotency_key": key}
                 for index, key in enumerate(ordered)}
        return lambda: services.bets_place(round_id=round_.pk, items=items, client=integration)

    for trial in range(3):
        trial_keys = [f"t{trial}-{key}" for key in keys]
        first, second = together([bulk("p1", trial_keys), bulk("p2", trial_keys[::-1])])
        assert isinstance(first, dict) and isinstance(second, dict), (first, second)
        # One request placed every bet; the other's items are each its own answer (a conflict: the
        # key holds the other account's bet), in the order it sent them.
        placed = [outcomes for outcomes in (first, second) if all(item.created for item in outcomes.values())]
        refused = [outcomes for outcomes in (first, second) if all(item.error for item in outcomes.values())]
        assert len(placed) == 1 and len(refused) == 1, (first, second)
        assert all(isinstance(item.error, Conflict) for item in refused[0].values())
    assert Bet.objects.count() == 3 * len(keys)
    assert_ledger_matches_balances()
