"""bench_intake --prefill: past bets and their ledger entries written set-based, the ledger still
equal to every balance, and no audit event for the sequencer to take on during the phases."""

from decimal import Decimal

import pytest
from django.core.management import CommandError
from django.db import connection
from django.db.models import Count, Sum

from audit.models import AuditEvent
from benchmarks.database import foreign_keys_checked_after, refuse_missing_foreign_keys
from benchmarks.intake import data, prefill
from dbutils.partitions import own_foreign_keys
from games.choices import BetStatus, RoundStatus
from games.models import Bet, BetKey, Round
from wallet import services as wallet_services
from wallet.models import Account, LedgerEffect, LedgerEntry
from wallet.selectors import account_ledger_discrepancies

pytestmark = pytest.mark.owner  # VACUUM, as the tables' owner


def foreign_keys() -> dict:
    with connection.cursor() as cursor:
        return {model: sorted(own_foreign_keys(cursor, model._meta.db_table)) for model in (Bet, LedgerEntry)}


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(prefill, "CHUNK_BETS", 400)  # three statements for 1,001 bets


def test_prefill_writes_settled_history_that_keeps_the_ledger_equal(postgres, small_chunks):
    client = data.User.objects.get(pk=data.User.objects.create_user(username="bench-game-server").pk)
    accounts = data.accounts(7)
    said = []

    # An account whose balance moved before the history (as the empty tables' bets move them).
    wallet_services.account_adjust(external_id=accounts[0], actor="system:test", amount="-3.00", reason="before")

    keys = foreign_keys()
    prefill.prefill(1001, client_id=client.pk, accounts=data.account_id_range(), say=said.append)
    assert foreign_keys() == keys and len(keys[Bet]) == 3 and len(keys[LedgerEntry]) == 2  # dropped, then back

    bets = Bet.objects.filter(round__game__slug="bench-history")
    assert bets.count() == 1001 and set(bets.values_list("status", flat=True)) == {BetStatus.PUSH}
    assert Round.objects.filter(game__slug="bench-history", status=RoundStatus.SETTLED).count() == 101
    assert set(bets.values_list("account__external_id", flat=True)) == set(accounts)
    entries = LedgerEntry.objects.filter(bet_id__isnull=False)
    assert entries.count() == 2002
    assert entries.aggregate(total=Sum("amount"))["total"] == Decimal("0.00")
    assert not entries.values("bet_id").annotate(n=Count("id")).exclude(n=2).exists()
    assert BetKey.objects.filter(bet__in=bets).count() == 1001  # as intake writes them
    assert LedgerEffect.objects.filter(bet_id__in=bets.values("pk")).count() == 2002
    assert data.ledger_problems() == []
    for account in Account.objects.filter(external_id__in=accounts):  # entry by entry, in id order
        assert account_ledger_discrepancies(account=account) == [], account.external_id
    assert not AuditEvent.objects.filter(object_type="bet").exists()
    assert said[-1].startswith("prefilled 1,001 bets") and len(said) == 5


def test_a_benchmark_refuses_a_database_whose_load_left_its_foreign_keys_dropped(postgres):
    keys = foreign_keys()
    refuse_missing_foreign_keys()  # as migrated: every key there
    missing = "settlement_ledgerentry lacks the foreign keys of account_id, bet_id"
    # As a load stopped midway leaves them; added back on the way out.
    with foreign_keys_checked_after(LedgerEntry._meta.db_table), pytest.raises(CommandError, match=missing):
        refuse_missing_foreign_keys()
    assert foreign_keys() == keys  # (this test's database is shared: its keys are back)
    refuse_missing_foreign_keys()
