"""A real failure of one account's writes, for the tests of held bets.

On PostgreSQL a trigger on the accounts table refuses any credit to that account (a stake, a
debit, still goes through, so bets can be placed while it is there); elsewhere (the embedded
SQLite) settlement's balance write is made to raise for that account, the same error at the same
place. ``remove()`` takes the fault away, as an operator would once its cause is fixed.
"""

from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, connection
from django.utils import timezone

from settlement import writes
from wallet.models import Account

MESSAGE = "account frozen by the test"
_FUNCTION = "test_refuse_credit"
_TRIGGER = "test_refuse_credit_trigger"


class AccountFault:
    def __init__(self, monkeypatch, account_id: int):
        self.monkeypatch = monkeypatch
        self.account_id = account_id
        self.installed = False
        self.original = writes.set_balances

    def install(self) -> "AccountFault":
        if connection.vendor == "postgresql":
            table = Account._meta.db_table
            with connection.cursor() as cursor:
                cursor.execute(f"""
                    CREATE OR REPLACE FUNCTION {_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        RAISE EXCEPTION '{MESSAGE} (%)', NEW.id;
                    END $$""")
                cursor.execute(f"""
                    CREATE TRIGGER {_TRIGGER} BEFORE UPDATE ON {table} FOR EACH ROW
                    WHEN (NEW.id = {int(self.account_id)} AND NEW.balance > OLD.balance)
                    EXECUTE FUNCTION {_FUNCTION}()""")
        else:
            def set_balances(balances):
                if self.account_id in balances:
                    raise IntegrityError(f"{MESSAGE} ({self.account_id})")
                return self.original(balances)

            self.monkeypatch.setattr(writes, "set_balances", set_balances)
        self.installed = True
        return self

    def remove(self) -> None:
        if not self.installed:
            return
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"DROP TRIGGER IF EXISTS {_TRIGGER} ON {Account._meta.db_table}")
                cursor.execute(f"DROP FUNCTION IF EXISTS {_FUNCTION}()")
        else:
            self.monkeypatch.setattr(writes, "set_balances", self.original)
        self.installed = False


# The frozen account bets on every side, so that whatever the outcome one of its bets pays (and is
# held); its losing bets need no credit and settle as usual.
BETS = [("alice", "PLAYER", "10.00"), ("bob", "BANKER", "10.00"), ("carol", "PLAYER", "5.00"),
        ("carol", "BANKER", "5.00"), ("carol", "TIE", "2.00"), ("alice", "TIE", "1.00"), ("bob", "PLAYER", "3.00")]


@pytest.fixture
def held_round(game, integration, funded_account, monkeypatch):
    """A dealt round of three accounts, carol's credits refused, settled by a sweep (on the clock of
    the aggregate tests: whole milliseconds, so the settlement lag is exact on SQLite too)."""
    from settlement import services
    from tests.aggregates_helpers import Clock
    from tests.settlement.test_services import open_round_with_bets

    monkeypatch.setattr(timezone, "now", Clock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC)).now)

    accounts = {name: funded_account(name, "100.00") for name in ("alice", "bob", "carol")}
    round_ = open_round_with_bets(game, integration, BETS)
    fault = AccountFault(monkeypatch, accounts["carol"].pk).install()
    result = services.settlement_sweep(worker="w")
    round_.refresh_from_db()
    yield {"round": round_, "accounts": accounts, "fault": fault, "result": result}
    fault.remove()
