"""The set-based settlement writes: the array literals they send, and their one statement held
equal to the plain path (``settings.SETTLEMENT_BETS_IN_ONE_STATEMENT`` off)."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import transaction

from games.choices import BetStatus
from games.models import Bet
from settlement import writes
from tests.settlement.test_services import open_round_with_bets
from wallet.writes import array_literal as _array


def test_numbers_and_words_become_one_array_literal():
    assert _array([1, 22, 333]) == "{1,22,333}"
    assert _array(x for x in [7]) == "{7}"
    assert _array([]) == "{}"
    assert _array([Decimal("0.00"), Decimal("19.51"), Decimal("-3.10")]) == "{0.00,19.51,-3.10}"
    assert _array([BetStatus.WON, BetStatus.LOST, BetStatus.PUSH]) == "{WON,LOST,PUSH}"


@pytest.mark.parametrize("values", [
    ["a b"], ["a,b"], [""], ["", "x"], ['"'], ["{}"], ["x\\y"], [None], ["NULL"], ["x", "null"],
])
def test_anything_an_array_literal_would_read_differently_is_refused(values):
    with pytest.raises(ValueError):
        _array(values)


@pytest.mark.services
def test_postgres_reads_back_the_same_values(postgres):
    ids = [1, 2, 9_000_000_000]
    amounts = [Decimal("0.00"), Decimal("19.51"), Decimal("123456789012.34")]
    statuses = [BetStatus.WON, BetStatus.LOST, BetStatus.PUSH]
    with postgres.cursor() as cursor:
        cursor.execute("SELECT %s::bigint[], %s::numeric[], %s::varchar[]",
                       [_array(ids), _array(amounts), _array(statuses)])
        assert cursor.fetchone() == (ids, amounts, ["WON", "LOST", "PUSH"])


BET_COLUMNS = [field.attname for field in Bet._meta.concrete_fields]
SETTLED_AT = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def bets_written(settings, one_statement: bool, settled: list, *, from_status=BetStatus.PENDING):
    """(every bet as ``settle_bets`` leaves it, its refusal or None); rolled back after."""
    settings.SETTLEMENT_BETS_IN_ONE_STATEMENT = one_statement
    refusal = None
    with transaction.atomic():
        try:
            with transaction.atomic():
                writes.settle_bets(settled, settled_at=SETTLED_AT, from_status=from_status)
        except writes.SettlementWriteError as error:
            refusal = str(error)
        rows = list(Bet.objects.order_by("pk").values_list(*BET_COLUMNS))
        transaction.set_rollback(True)
    return rows, refusal


@pytest.mark.django_db
def test_the_one_statement_writes_the_bets_as_the_plain_path(game, integration, funded_account, settings):
    funded_account("a", "1000.00")
    round_ = open_round_with_bets(game, integration, [("a", kind, "2.50") for kind in ("PLAYER", "BANKER", "TIE")])
    ids = list(Bet.objects.filter(round=round_).order_by("pk").values_list("pk", flat=True))
    settled = [(ids[0], BetStatus.WON, Decimal("5.00")), (ids[1], BetStatus.LOST, Decimal("0.00")),
               (ids[2], BetStatus.PUSH, Decimal("2.50"))]
    pending, _ = bets_written(settings, True, [])
    for batch in (settled, settled[1:]):
        rows, refusal = bets_written(settings, True, batch)
        assert refusal is None and rows != pending
        assert (rows, refusal) == bets_written(settings, False, batch)
    # A batch naming a bet that is not PENDING (or none at all) is refused, nothing written, on both paths.
    unknown = [*settled, (max(ids) + 1000, BetStatus.WON, Decimal("1.00"))]
    assert bets_written(settings, True, unknown) == bets_written(settings, False, unknown) == (
        pending, "4 bets to settle, 3 still pending")
    Bet.objects.filter(pk=ids[1]).update(status=BetStatus.HELD, hold_reason="x", held_at=SETTLED_AT)
    held, _ = bets_written(settings, True, [])
    assert bets_written(settings, True, settled) == bets_written(settings, False, settled) == (
        held, "3 bets to settle, 2 still pending")
    # An operator's settlement of a held bet.
    rows, refusal = bets_written(settings, True, settled[1:2], from_status=BetStatus.HELD)
    assert refusal is None and rows != held
    assert (rows, refusal) == bets_written(settings, False, settled[1:2], from_status=BetStatus.HELD)
