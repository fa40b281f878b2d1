"""A real failure of one account's writes, for the tests of held bets.

A trigger on the accounts table refuses any credit to that account (a stake, a debit, still goes
through, so bets can be placed while it is there). ``remove()`` takes the fault away, as an
operator would once its cause is fixed. Creating the trigger takes the tables' owner (the test's
``owner`` mark).
"""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.utils import timezone

from games.engine import REGISTRY, SIDE_BET_TYPES
from wallet.models import Account

MESSAGE = "account frozen by the test"
_FUNCTION = "test_refuse_credit"
_TRIGGER = "test_refuse_credit_trigger"


class AccountFault:
    def __init__(self, monkeypatch, account_id: int):
        self.account_id = account_id  # (monkeypatch: no longer used, kept for the callers)
        self.installed = False

    def install(self) -> "AccountFault":
        with connection.cursor() as cursor:
            cursor.execute(f"""
                CREATE OR REPLACE FUNCTION {_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    RAISE EXCEPTION '{MESSAGE} (%)', NEW.id;
                END $$""")
            cursor.execute(f"""
                CREATE TRIGGER {_TRIGGER} BEFORE UPDATE ON {Account._meta.db_table} FOR EACH ROW
                WHEN (NEW.id = {int(self.account_id)} AND NEW.balance > OLD.balance)
                EXECUTE FUNCTION {_FUNCTION}()""")
        self.installed = True
        return self

    def remove(self) -> None:
        if not self.installed:
            return
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER IF EXISTS {_TRIGGER} ON {Account._meta.db_table}")
            cursor.execute(f"DROP FUNCTION IF EXISTS {_FUNCTION}()")
        self.installed = False


# The frozen account bets on every side, so that whatever the outcome one of its bets pays (and is
# held); its losing bets need no credit and settle as usual.
BETS = [("alice", "PLAYER", "10.00"), ("bob", "BANKER", "10.00"), ("carol", "PLAYER", "5.00"),
        ("carol", "BANKER", "5.00"), ("carol", "TIE", "2.00"), ("alice", "TIE", "1.00"), ("bob", "PLAYER", "3.00"),
        ("carol", "BANKER_COMMISSION_FREE", "4.00"), ("alice", "EITHER_PAIR", "1.50"),
        ("carol", "DRAGON_BONUS_PLAYER", "2.50")]


def offer_every_side_bet(game) -> None:
    """The game takes every side bet, at its default paytable."""
    game.side_bets = {name: REGISTRY[name].default_paytable for name in SIDE_BET_TYPES}
    game.full_clean()
    game.save()


@pytest.fixture
def held_round(game, integration, funded_account, monkeypatch):
    """A dealt round of three accounts, carol's credits refused, settled by a sweep (on the clock of
    the aggregate tests)."""
    from settlement import services
    from tests.aggregates_helpers import Clock
    from tests.settlement.test_services import open_round_with_bets

    monkeypatch.setattr(timezone, "now", Clock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC)).now)

    offer_every_side_bet(game)
    accounts = {name: funded_account(name, "100.00") for name in ("alice", "bob", "carol")}
    round_ = open_round_with_bets(game, integration, BETS)
    fault = AccountFault(monkeypatch, accounts["carol"].pk).install()
    result = services.settlement_sweep(worker="w")
    round_.refresh_from_db()
    yield {"round": round_, "accounts": accounts, "fault": fault, "result": result}
    fault.remove()
