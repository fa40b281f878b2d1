"""Every rule also holds in the database: direct writes that bypass validation are refused."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from games import services
from games.models import Bet, BetKey, GameInstance, Round, SeedPair
from wallet.models import Account, LedgerEffect, LedgerEntry

pytestmark = pytest.mark.django_db


def refused(queryset, **values) -> bool:
    try:
        with transaction.atomic():
            queryset.update(**values)
    except IntegrityError:
        return True
    return False


@pytest.mark.parametrize("values", [
    {"player_multiplier": Decimal("0.9999")},
    {"banker_multiplier": Decimal("0")},
    {"tie_multiplier": Decimal("1000.0001")},
    {"decks": 0},
    {"decks": 9},
    {"min_bet": Decimal("0")},
    {"min_bet": Decimal("-1")},
    {"min_bet": Decimal("2000.00")},  # above max_bet 1000
    {"currency": "usd"},
    {"currency": "US"},
    {"status": "paused"},
    {"side_bets": []},
    {"side_bets": {"PLAYER": {"PLAYER": "2"}}},                   # a main bet is no side bet
    {"side_bets": {"PLAYER_PAIR": {"PAIR": "0.99"}}},             # pays less than the stake
    {"side_bets": {"PLAYER_PAIR": {"PAIR": "1000.0001"}}},
    {"side_bets": {"PLAYER_PAIR": {"PAIR": "12.00001"}}},         # five places
    {"side_bets": {"PLAYER_PAIR": {"PAIR": 12}}},                 # a JSON number, not decimal text
    {"side_bets": {"PLAYER_PAIR": {"PAIR": "1e2"}}},
    {"side_bets": {"PLAYER_PAIR": {"PAIRS": "12"}}},              # no such event
    {"side_bets": {"PLAYER_PAIR": ["12"]}},
    {"side_bets": {"DRAGON_BONUS_PLAYER": {"NATURAL_TIE": "2"}}},  # a push returns the stake, no more
])
def test_game_instance_constraints(game, values):
    assert refused(GameInstance.objects.filter(pk=game.pk), **values)


def test_valid_game_update_passes_the_constraints(game):
    assert not refused(GameInstance.objects.filter(pk=game.pk), player_multiplier=Decimal("1.0"),
                       tie_multiplier=Decimal("1000"), decks=1, min_bet=Decimal("1000.00"),
                       side_bets={"PLAYER_PAIR": {"PAIR": "1000"}, "PERFECT_PAIR": {"ONE_PERFECT_PAIR": "1.0001"},
                                  "DRAGON_BONUS_PLAYER": {"NATURAL_TIE": "1.0", "WIN_BY_9": "31"}})


def test_only_one_active_seed_pair_per_game(game):
    with pytest.raises(IntegrityError):
        SeedPair.objects.create(game=game, server_seed="a" * 64, server_seed_hash="b" * 64, client_seed="c")


def test_seed_pair_constraints(game):
    pairs = SeedPair.objects.filter(game=game)
    assert refused(pairs, next_nonce=-1)
    assert refused(pairs, server_seed="ABC")


@pytest.fixture
def dealt_round(game, integration, funded_account):
    account = funded_account("p1", "100.00")
    round_ = services.round_open(game_id=game.pk, actor=integration)
    services.bet_place(round_id=round_.pk, account_external_id="p1", bet_type="PLAYER", stake="10.00",
                       idempotency_key="k", client=integration)
    services.round_deal(round_id=round_.pk, actor=integration)
    return round_, account


def test_nonce_unique_per_seed_pair(dealt_round):
    round_, _ = dealt_round
    with pytest.raises(IntegrityError):
        Round.objects.create(game=round_.game, seed_pair=round_.seed_pair, nonce=round_.nonce, decks=8)


@pytest.mark.parametrize("values", [
    {"status": "OPEN"},                        # an open round has no outcome
    {"outcome": None},                         # a dealt round has one
    {"status": "SETTLED"},                     # settled needs a settlement time
    {"status": "VOID"},                        # void needs a void time
    {"player_score": 10},
    {"status": "LOST"},
])
def test_round_constraints(dealt_round, values):
    round_, _ = dealt_round
    assert refused(Round.objects.filter(pk=round_.pk), **values)


@pytest.mark.parametrize("values", [
    {"stake": Decimal("0")},
    {"multiplier": Decimal("0.5")},
    {"bet_type": "DRAGON"},
    {"bet_type": "PLAYER_PAIR"},                        # a side bet without its paytable
    {"paytable": {"PLAYER": "2"}},                      # a main bet with one
    {"bet_type": "PLAYER_PAIR", "paytable": {"PLAYER": "2"}},  # not an event of the side bet
    {"bet_type": "PLAYER_PAIR", "paytable": {"PAIR": "0.5"}},
    {"bet_type": "DRAGON_BONUS_BANKER", "paytable": {"NATURAL_TIE": "1.5"}},
    {"status": "WON"},                                  # settled without a payout
    {"payout": Decimal("1.00")},                        # pending with a payout
    {"status": "LOST", "payout": Decimal("5.00")},      # lost pays nothing
    {"status": "PUSH", "payout": Decimal("9.00")},      # a push returns the stake exactly
    {"status": "WON", "payout": Decimal("-1.00")},
])
def test_bet_constraints(dealt_round, values):
    bet = Bet.objects.get()
    if "payout" in values and values.get("status", "PENDING") != "PENDING":
        values = {**values, "settled_at": timezone.now()}
    assert refused(Bet.objects.filter(pk=bet.pk), **values)


def test_idempotency_key_unique_per_client(dealt_round, integration):
    bet = Bet.objects.get()
    assert BetKey.objects.get(client=integration, idempotency_key=bet.idempotency_key).bet_id == bet.pk
    with pytest.raises(IntegrityError, match="games_betkey_pkey"):
        BetKey.objects.create(client=integration, idempotency_key=bet.idempotency_key, bet_id=bet.pk + 1)


def test_account_balance_never_negative(dealt_round):
    _, account = dealt_round
    assert refused(Account.objects.filter(pk=account.pk), balance=Decimal("-0.01"))


def test_ledger_effect_of_a_bet_happens_once(dealt_round):
    bet = Bet.objects.get()
    assert LedgerEntry.objects.filter(bet_id=bet.pk, kind="STAKE").count() == 1
    assert list(LedgerEffect.objects.filter(bet_id=bet.pk).values_list("kind", flat=True)) == ["STAKE"]
    with pytest.raises(IntegrityError, match="wallet_ledgereffect_pkey"):
        LedgerEffect.objects.create(bet_id=bet.pk, kind="STAKE")


@pytest.mark.parametrize("values", [
    {"amount": Decimal("10.00")},          # a stake is a debit
    {"kind": "ADJUSTMENT"},                # an adjustment has no bet
    {"kind": "REFUND"},                    # a refund is a credit
    {"balance_after": Decimal("-1")},
    {"kind": "BONUS"},
])
@pytest.mark.owner  # the application role may not update the ledger at all
def test_ledger_constraints(dealt_round, values):
    entry = LedgerEntry.objects.get(kind="STAKE")
    assert refused(LedgerEntry.objects.filter(pk=entry.pk), **values)


@pytest.mark.owner  # the trigger holds even for the tables' owner (the application role may not try)
@pytest.mark.parametrize("change", ["update", "delete"])
def test_ledger_is_append_only_in_the_database(dealt_round, change):
    entries = LedgerEntry.objects.filter(kind="STAKE")
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        if change == "update":
            entries.update(reason="rewritten")
        else:
            entries.delete()
    assert entries.get().reason == ""


@pytest.mark.owner  # as the ledger's: a key or effect deleted or changed would let it happen twice
@pytest.mark.parametrize("change", ["update", "delete"])
@pytest.mark.parametrize("model", [BetKey, LedgerEffect])
def test_idempotency_keys_and_ledger_effects_are_append_only_in_the_database(dealt_round, change, model):
    rows = model.objects.all()
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        if change == "update":
            rows.update(bet_id=0)
        else:
            rows.delete()
    assert rows.get().bet_id == Bet.objects.get().pk


def test_a_side_bet_with_a_paytable_of_its_type_passes(dealt_round):
    bet = Bet.objects.get()
    assert not refused(Bet.objects.filter(pk=bet.pk), bet_type="DRAGON_BONUS_BANKER",
                       paytable={"NATURAL_TIE": "1", "WIN_BY_9": "31"})
