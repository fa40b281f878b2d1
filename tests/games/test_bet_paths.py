"""The shortcuts of bet intake held equal to the plain paths they stand in for: a single bet's one
statement (settings.BET_IN_ONE_STATEMENT, games/writes.py) and the set-based writes of bulk intake
(settings.BULK_WRITES_IN_ONE_STATEMENT: wallet/writes.py, audit.services.audit_record_many). The same
requests on the same rounds and accounts give the same answers and write the same rows either way.
"""

import json
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction

from audit.context import request_context
from audit.models import AuditEvent
from core.errors import Conflict
from games import services
from games.models import Bet, BetKey, Round
from wallet.models import Account, LedgerEntry

pytestmark = [pytest.mark.services]

# (round, account, bet type, stake, idempotency key): accepted, refused for each reason, replayed.
SINGLES = [
    ("open", "rich", "PLAYER", "10.00", "s1"),
    ("open", "rich", "BANKER", "10.00", "s1"),  # the key again, another bet: a conflict
    ("open", "rich", "PLAYER", "10.00", "s1"),  # the key again, the same bet: a replay
    ("open", "poor", "TIE", "20.00", "s2"),  # more than the balance
    ("open", "euro", "TIE", "5.00", "s3"),  # another currency
    ("open", "nobody", "TIE", "5.00", "s4"),  # no such account
    ("open", "rich", "TIE", "0.50", "s5"),  # below the game's minimum
    ("dealt", "rich", "TIE", "5.00", "s6"),  # the round takes no bets
    ("missing", "rich", "TIE", "5.00", "s7"),  # no such round
    ("open", "poor", "BANKER", "7.25", "s8"),
    ("open", "rich", "DRAGON_BONUS_BANKER", "2.00", "s9"),  # a side bet the game offers
    ("open", "rich", "PERFECT_PAIR", "2.00", "s10"),  # one it does not
]
BULK = {
    0: {"account_external_id": "rich", "bet_type": "PLAYER", "stake": "3.00", "idempotency_key": "b1"},
    1: {"account_external_id": "poor", "bet_type": "TIE", "stake": "1.00", "idempotency_key": "b2"},
    2: {"account_external_id": "poor", "bet_type": "TIE", "stake": "100.00", "idempotency_key": "b3"},
    3: {"account_external_id": "rich", "bet_type": "PLAYER", "stake": "3.00", "idempotency_key": "b1"},
    4: {"account_external_id": "poor", "bet_type": "BANKER", "stake": "7.25", "idempotency_key": "s8"},
    5: {"account_external_id": "rich", "bet_type": "BANKER", "stake": "2.50", "idempotency_key": "b4"},
    6: {"account_external_id": "rich", "bet_type": "PLAYER_PAIR", "stake": "1.50", "idempotency_key": "b5"},
    7: {"account_external_id": "rich", "bet_type": "EITHER_PAIR", "stake": "1.50", "idempotency_key": "b6"},
}
EXPECTED_KINDS = ["bet", "conflict", "bet", "invalid", "invalid", "invalid", "invalid", "conflict", "missing",
                  "bet", "bet", "invalid", "bet", "bet", "invalid", "bet", "bet", "bet", "bet", "invalid"]
SIDE_BETS = {"DRAGON_BONUS_BANKER": {"NATURAL_WIN": "2", "WIN_BY_9": "31", "WIN_BY_4": "2"},
             "PLAYER_PAIR": {"PAIR": "12"}}


def _error(error) -> tuple:
    if isinstance(error, ValidationError):
        return "invalid", error.message_dict
    if isinstance(error, Round.DoesNotExist):
        return ("missing",)
    return "conflict", error.field, error.message, error.code


def _bet(bet, created) -> tuple:
    return "bet", bet.idempotency_key, created, bet.round_id, bet.bet_type, bet.stake, bet.multiplier, \
        bet.paytable, bet.account.external_id, bet.account.balance


def _single(round_id, account, bet_type, stake, key, client) -> tuple:
    try:
        return _bet(*services.bet_place(round_id=round_id, account_external_id=account, bet_type=bet_type,
                                        stake=stake, idempotency_key=key, client=client))
    except (ValidationError, Conflict, Round.DoesNotExist) as error:
        return _error(error)


def _rows(since: dict) -> dict:
    """What the requests wrote, without ids or times (which differ between runs)."""
    bets = Bet.objects.filter(pk__gt=since["bet"]).select_related("account")
    key_of = {bet.pk: bet.idempotency_key for bet in bets}
    return {
        "bets": sorted((bet.idempotency_key, bet.round_id, bet.account.external_id, bet.bet_type, bet.stake,
                        bet.multiplier, json.dumps(bet.paytable, sort_keys=True), bet.status, bet.payout)
                       for bet in bets),
        "keys": sorted((key.idempotency_key, key_of.get(key.bet_id)) for key in BetKey.objects.filter(bet__in=bets)),
        "balances": dict(Account.objects.values_list("external_id", "balance")),
        "ledger": [(entry.account.external_id, key_of.get(entry.bet_id), entry.kind, entry.amount,
                    entry.balance_after, entry.reason)
                   for entry in LedgerEntry.objects.filter(pk__gt=since["entry"]).select_related("account")
                   .order_by("pk")],
        "audit": [(event.actor_user_id, event.actor, event.action, event.object_type,
                   key_of.get(int(event.object_id)), event.before, event.after, event.reason, event.request_id,
                   event.source_ip)
                  for event in AuditEvent.objects.filter(pk__gt=since["event"]).order_by("pk")],
    }


@pytest.fixture
def table(game, integration, funded_account):
    game.side_bets = SIDE_BETS
    game.full_clean()
    game.save()
    funded_account("rich", "100.00")
    funded_account("poor", "15.00")
    funded_account("euro", "50.00", currency="EUR")
    open_round = services.round_open(game_id=game.pk, actor=integration)
    dealt = services.round_open(game_id=game.pk, actor=integration)
    services.round_deal(round_id=dealt.pk, actor=integration)
    return {"open": open_round.pk, "dealt": dealt.pk, "missing": 10**12}


def test_both_paths_answer_and_write_the_same(db, settings, table, integration):
    def run(in_one_statement: bool) -> tuple:
        settings.BET_IN_ONE_STATEMENT = settings.BULK_WRITES_IN_ONE_STATEMENT = in_one_statement
        since = {"bet": Bet.objects.order_by("-pk").values_list("pk", flat=True).first() or 0,
                 "entry": LedgerEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0,
                 "event": AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first() or 0}
        with request_context("req-paths", "192.0.2.9"), transaction.atomic():
            answers = [_single(table[round_name], *rest, client=integration) for round_name, *rest in SINGLES]
            outcomes = services.bets_place(round_id=table["open"], items=BULK, client=integration)
            answers += [_bet(outcomes[index].bet, outcomes[index].created) if outcomes[index].error is None
                        else _error(outcomes[index].error) for index in sorted(outcomes)]
            rows = _rows(since)
            transaction.set_rollback(True)
        return answers, rows

    shortcut, plain = run(True), run(False)
    answers, rows = shortcut
    assert [answer[0] for answer in answers] == EXPECTED_KINDS
    assert rows["balances"]["rich"] == (Decimal("100.00") - Decimal("10.00") - Decimal("2.00") - Decimal("3.00")
                                        - Decimal("2.50") - Decimal("1.50"))
    assert rows["balances"]["poor"] == Decimal("15.00") - Decimal("7.25") - Decimal("1.00")
    assert len(rows["bets"]) == len(rows["ledger"]) == len(rows["audit"]) == len(rows["keys"]) == 7
    side = {bet[0]: bet for bet in rows["bets"] if bet[3] in SIDE_BETS}
    assert side["s9"][5:7] == (Decimal("31"), json.dumps({"WIN_BY_4": "2", "WIN_BY_9": "31", "NATURAL_WIN": "2",
                                                          "NATURAL_TIE": "1"}, sort_keys=True))  # its highest; all
    assert [answer[-1] for answer in answers if answer[0] == "invalid"][-1] == {
        "bet_type": ["This game does not offer the EITHER_PAIR bet."]}
    assert all(key == bet_key for key, bet_key in rows["keys"])
    assert plain == shortcut
