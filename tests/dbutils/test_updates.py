"""update_rows: one statement run for every row, the values stored as the ORM's save stores them."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dbutils.updates import update_rows
from games import services
from games.models import GameInstance, Round
from wallet.models import Account

pytestmark = pytest.mark.django_db


def test_writes_each_row_its_own_values_as_save_would(game, integration, operator):
    first, second = (services.round_open(game_id=game.pk, actor=integration) for _ in range(2))

    written = update_rows(Round, ["cards", "player_cards", "void_reason"],
                          [(first.pk, ["AS", "KD"], ["AS"], "it's"), (second.pk, [], {"a": [1, None]}, "")])

    assert written == 2
    one, two = Round.objects.get(pk=first.pk), Round.objects.get(pk=second.pk)
    assert (one.cards, one.player_cards, one.void_reason) == (["AS", "KD"], ["AS"], "it's")
    assert (two.cards, two.player_cards, two.void_reason) == ([], {"a": [1, None]}, "")
    # Dates and decimals too; and what the ORM saves reads back the same.
    at = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    assert update_rows(GameInstance, ["updated_at", "tie_multiplier"], [(game.pk, at, Decimal("8.5"))]) == 1
    game.refresh_from_db()
    assert (game.updated_at, game.tie_multiplier) == (at, Decimal("8.5000"))
    two.cards = ["AS", "KD"]
    two.save(update_fields=["cards"])
    assert Round.objects.filter(cards=["AS", "KD"]).count() == 2
    assert GameInstance.objects.filter(updated_at=at, tie_multiplier=Decimal("8.5")).exists()


def test_only_rows_that_still_hold_the_condition_are_written_and_counted(funded_account):
    rich, poor = funded_account("rich", "100.00"), funded_account("poor", "5.00")

    written = update_rows(Account, ["balance"], [(rich.pk, Decimal("1.25")), (poor.pk, "7.10")],
                          where={"currency": "USD", "balance": Decimal("100.00")})

    assert written == 1
    assert dict(Account.objects.values_list("external_id", "balance")) == {"rich": Decimal("1.25"),
                                                                         "poor": Decimal("5.00")}


def test_one_statement_whatever_the_rows_and_none_for_no_rows(funded_account):
    accounts = [funded_account(f"p{number}", "10.00") for number in range(5)]
    with CaptureQueriesContext(connection) as queries:
        assert update_rows(Account, ["balance"], []) == 0
    assert not queries.captured_queries
    with CaptureQueriesContext(connection) as queries:
        update_rows(Account, ["balance"], [(account.pk, Decimal(number)) for number, account in enumerate(accounts)])
    assert len(queries.captured_queries) == 1
    assert sorted(Account.objects.values_list("balance", flat=True)) == [Decimal(n) for n in range(5)]
