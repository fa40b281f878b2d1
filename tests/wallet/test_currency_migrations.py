"""The migrations to money at up to 8 places (games 0017, wallet 0008, settlement 0011) keep every row,
both ways: amounts exactly; a yen table's limits stored with cents are brought within whole yen, and
its daily aggregates go from cents to yen."""

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from games import services as game_services
from games.models import Bet, GameInstance
from settlement import services as settlement_services
from settlement.models import DailyBetTotals, SettlementBatch
from tests import app_role
from wallet import services as wallet_services
from wallet.models import Account, LedgerEntry


def money_rows() -> dict:
    return {
        "bets": sorted(Bet.objects.values_list("pk", "stake", "payout", "status")),
        "ledger": sorted(LedgerEntry.objects.values_list("pk", "amount", "balance_after")),
        "accounts": sorted(Account.objects.values_list("pk", "balance", "currency")),
        "batches": sorted(SettlementBatch.objects.values_list("pk", "total_staked", "total_paid")),
        "aggregates": sorted(DailyBetTotals.objects.values_list("pk", "handle_cents", "paid_out_cents",
                                                                "expected_return_ucents")),
    }


@pytest.mark.services
@pytest.mark.owner  # migrating is the owner's
def test_money_migrations_keep_every_row(postgres, operator, integration):
    game = game_services.game_create(actor=operator, slug="usd", name="USD", min_bet=Decimal("0.01"),
                                     max_bet=Decimal("1000"))
    yen = game_services.game_create(actor=operator, slug="yen", name="Yen", currency="JPY",
                                    min_bet=Decimal("100"), max_bet=Decimal("5000"))
    wallet_services.account_create(actor=operator, external_id="p", currency="USD")
    wallet_services.account_adjust(external_id="p", actor=operator, amount="500.07", reason="deposit")
    for n, stake in enumerate(["10.01", "0.99", "123.45"]):
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        game_services.bet_place(round_id=round_.pk, account_external_id="p", bet_type="BANKER", stake=stake,
                                idempotency_key=f"k-{n}", client=integration)
        game_services.round_deal(round_id=round_.pk, actor=integration)
    settlement_services.settlement_run(limit=10)
    before = money_rows()
    assert len(before["bets"]) == 3 and before["aggregates"]
    try:
        call_command("migrate", "games", "0016", verbosity=0)
        call_command("migrate", "wallet", "0007", verbosity=0)
        with postgres.cursor() as cursor:
            # As an earlier release could hold them: a yen table's minimum with cents, its aggregates in cents.
            cursor.execute("UPDATE games_gameinstance SET min_bet = 100.50 WHERE id = %s", [yen.pk])
            cursor.execute("INSERT INTO settlement_dailybettotals (day, game_id, bet_type, bets, won, lost, "
                           "pushed, handle_cents, paid_out_cents, expected_return_ucents) "
                           "VALUES ('2026-01-01', %s, 'TIE', 1, 0, 1, 0, 10050, 0, 9000000000)", [yen.pk])
        call_command("migrate", verbosity=0)
    finally:
        call_command("migrate", verbosity=0)
        call_command("db_roles", app_role.APP_ROLE, f"--password={app_role.APP_PASSWORD}", stdout=StringIO())
    after = money_rows()
    yen_rows = [row for row in after["aggregates"] if row not in before["aggregates"]]
    assert yen_rows and [row[1:3] for row in yen_rows] == [(101, 0)]  # 100.50 yen in cents → 101 yen
    assert {**after, "aggregates": before["aggregates"]} == before
    assert [row for row in after["aggregates"] if row in before["aggregates"]] == before["aggregates"]
    yen.refresh_from_db()
    assert (yen.min_bet, yen.max_bet) == (Decimal("101"), Decimal("5000"))
    column = GameInstance._meta.get_field("min_bet")
    with postgres.cursor() as cursor:
        cursor.execute("SELECT numeric_precision, numeric_scale FROM information_schema.columns "
                       "WHERE table_name = 'games_bet' AND column_name = 'stake'")
        assert cursor.fetchone() == (column.max_digits, column.decimal_places) == (26, 8)
