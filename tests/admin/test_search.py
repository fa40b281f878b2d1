"""The searches of the big lists (rounds, bets, ledger, audit trail): what each finds, and what not.

They are built from index-backed exact lookups (backoffice.admin.search.indexed_search) instead of Django's
OR over joined tables; these tests pin what support staff can find with them.
"""

import re
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from audit.context import request_context
from audit.models import AuditEvent, AuditLeaf
from audit.services import audit_sequence
from dbutils import partitions
from games import selectors
from games import services as game_services
from games.models import Bet, GameInstance, Round, SeedPair
from settlement.models import SettlementBatch
from wallet import services as wallet_services
from wallet.models import Account, LedgerEntry

from .helpers import admin_url


def found(client, model, term, **params):
    response = client.get(admin_url(model), {"q": term, **params})
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


@pytest.fixture
def two_players(play, player, funded_account, game):
    """Two rounds of main-table: player-1 bets on the first, player-2 on the second."""
    other = funded_account("player-2", "100.00")
    first = play(bets=[(player, "BANKER", "10.00"), (player, "PLAYER", "2.00")])
    second = play(bets=[(other, "TIE", "1.00")])
    return player, other, first, second


# --- Rounds -------------------------------------------------------------------------------------------

def test_the_round_search_finds_by_id_slug_hash_and_account(as_support, two_players, operator):
    player, other, first, second = two_players
    side = game_services.game_create(actor=operator, slug="side-table", name="Side table", min_bet="1.00",
                                     max_bet="100.00", client_seed="side-client-seed")
    side_round = game_services.round_open(game_id=side.pk, actor=operator)

    assert found(as_support, Round, str(first.pk)) == [first]
    assert found(as_support, Round, "player-2") == [second]
    assert found(as_support, Round, "  player-1 ") == [first]  # the term is stripped
    assert set(found(as_support, Round, first.seed_pair.server_seed_hash)) == {first, second}
    assert found(as_support, Round, side_round.seed_pair.server_seed_hash) == [side_round]
    assert set(found(as_support, Round, "main-table")) == {first, second}
    assert set(found(as_support, Round, "table")) == {first, second, side_round}  # part of a slug
    assert found(as_support, Round, "side") == [side_round]


def test_the_round_search_finds_nothing_it_should_not(as_support, two_players):
    player, other, first, second = two_players

    assert found(as_support, Round, "player") == []  # an account external id only matches whole
    assert found(as_support, Round, first.seed_pair.server_seed_hash[:16]) == []  # so does a hash
    assert found(as_support, Round, str(second.pk + 1000)) == []
    assert found(as_support, Round, "no-such-thing") == []


def test_the_round_search_keeps_the_list_filters(as_support, two_players, play, player):
    player, other, first, second = two_players
    open_round = play(bets=[(player, "TIE", "1.00")], deal=False)

    assert found(as_support, Round, "player-1", status__exact="OPEN") == [open_round]
    assert found(as_support, Round, "player-2", status__exact="OPEN") == []


# --- Bets ---------------------------------------------------------------------------------------------

def test_the_bet_search_finds_by_account_client_key_and_ids(as_support, two_players):
    player, other, first, second = two_players
    banker = Bet.objects.get(round=first, bet_type="BANKER")
    tie = Bet.objects.get(round=second)

    assert set(found(as_support, Bet, "player-1")) == set(first.bets.all())
    assert found(as_support, Bet, "player-2") == [tie]
    assert set(found(as_support, Bet, "game-server")) == set(Bet.objects.all())  # the client's user name
    assert found(as_support, Bet, banker.idempotency_key) == [banker]
    assert set(found(as_support, Bet, str(first.pk))) >= set(first.bets.all())  # the round id
    assert banker in found(as_support, Bet, str(banker.pk))  # the bet id


def test_the_bet_search_finds_nothing_it_should_not(as_support, two_players):
    player, other, first, second = two_players
    banker = Bet.objects.get(round=first, bet_type="BANKER")

    assert found(as_support, Bet, "player") == []
    assert found(as_support, Bet, "game") == []
    assert found(as_support, Bet, banker.idempotency_key[:-1]) == []
    assert found(as_support, Bet, "main-table") == []  # bets are not searched by game: filter by it
    assert found(as_support, Bet, "9" * 30) == []  # too long for an id: no error, nothing found


# --- Ledger -------------------------------------------------------------------------------------------

def test_the_ledger_search_finds_by_account_adjustment_reason_and_ids(as_support, two_players, operator):
    player, other, first, second = two_players
    refund = wallet_services.account_adjust(external_id="player-2", actor=operator, amount="5.00",
                                            reason="Goodwill credit, ticket #4711")
    stake = LedgerEntry.objects.get(bet_id=second.bets.get().pk, kind="STAKE")

    assert set(found(as_support, LedgerEntry, "player-2")) == set(LedgerEntry.objects.filter(account=other))
    assert found(as_support, LedgerEntry, "ticket #4711") == [refund]
    assert found(as_support, LedgerEntry, "GOODWILL") == [refund]  # any part, any case
    assert set(found(as_support, LedgerEntry, "test deposit")) == set(
        LedgerEntry.objects.filter(kind="ADJUSTMENT", reason="test deposit"))
    assert stake in found(as_support, LedgerEntry, str(stake.pk))
    assert stake in found(as_support, LedgerEntry, str(stake.bet_id))
    assert found(as_support, LedgerEntry, "player-2", kind__exact="ADJUSTMENT") == \
        list(LedgerEntry.objects.filter(account=other, kind="ADJUSTMENT").order_by("-id"))


def test_the_ledger_search_finds_nothing_it_should_not(as_support, two_players):
    assert found(as_support, LedgerEntry, "player") == []
    assert found(as_support, LedgerEntry, "STAKE") == []  # the kind is a filter, not a search
    assert found(as_support, LedgerEntry, "no such reason") == []


# --- Audit trail ----------------------------------------------------------------------------------

def test_the_audit_search_finds_by_object_actor_request_and_hash(as_support, two_players, operator):
    player, other, first, second = two_players
    with request_context("req-5f3a9c", "10.0.0.7", operator):
        wallet_services.account_adjust(external_id="player-1", actor=operator, amount="1.00", reason="x")
    requested = AuditEvent.objects.get(request_id="req-5f3a9c")
    dealt = AuditEvent.objects.get(action="round.dealt", object_id=str(first.pk))
    audit_sequence()

    assert found(as_support, AuditEvent, "req-5f3a9c") == [requested]
    assert found(as_support, AuditEvent, AuditLeaf.objects.get(event=dealt).hash) == [dealt]
    assert dealt in found(as_support, AuditEvent, str(first.pk))  # the object id (and the event id)
    by_actor = found(as_support, AuditEvent, "olivia")
    assert by_actor and {event.actor for event in by_actor} == {"olivia-operator"}
    assert set(found(as_support, AuditEvent, "olivia-operator")) == set(by_actor)
    event = AuditEvent.objects.order_by("pk").first()
    assert event in found(as_support, AuditEvent, str(event.pk))


def test_the_audit_search_finds_nothing_it_should_not(as_support, two_players):
    audit_sequence()
    leaf = AuditLeaf.objects.order_by("index").first()

    assert found(as_support, AuditEvent, "operator") == []  # the actor is matched from its beginning
    assert found(as_support, AuditEvent, leaf.hash[:20]) == []  # a hash only whole
    assert found(as_support, AuditEvent, "req-") == []  # a request id only whole
    assert found(as_support, AuditEvent, "zz-nothing") == []


def test_the_audit_search_reads_the_hashes_only_for_a_whole_hash(as_support, two_players):
    """Neither hash column has an index in the months' partitions: any other term never scans them."""
    audit_sequence()
    with CaptureQueriesContext(connection) as queries:
        found(as_support, AuditEvent, "1000000")
    assert not [query["sql"] for query in queries if '"hash" =' in query["sql"]]


def test_a_leaf_hash_is_found_through_the_leaves_hash_index(as_support, two_players):
    """0.4 s a search by a scan of the leaves at 10 million events; through their hash index, 0.6 ms."""
    audit_sequence()
    leaf = AuditLeaf.objects.order_by("-index").first()
    with CaptureQueriesContext(connection) as queries:
        assert [event.pk for event in found(as_support, AuditEvent, leaf.hash)] == [leaf.event_id]
    on_leaves = [query["sql"] for query in queries if '"audit_auditleaf"."hash" =' in query["sql"]]
    assert on_leaves and all("JOIN" not in sql for sql in on_leaves), on_leaves  # the leaves alone
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a few rows here: the plan as at scale
        plan = AuditLeaf.objects.filter(hash=leaf.hash).values_list("event_id", flat=True).explain()
    assert "audit_leaf_hash_idx" in plan, plan


def test_the_bets_list_filtered_by_placing_time_reads_only_those_months(as_support, two_players):
    """A bet's id carries its month: the filter keeps only the ids of the months it spans."""
    today = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    params = {"placed_at__gte": str(today), "placed_at__lt": str(today + timedelta(days=1))}
    with CaptureQueriesContext(connection) as queries:
        response = as_support.get(admin_url(Bet), params)
    listed_ids = sorted(bet.pk for bet in response.context["cl"].result_list)
    assert listed_ids == sorted(Bet.objects.values_list("pk", flat=True))
    listed = [query["sql"] for query in queries if '"games_bet"."placed_at" >=' in query["sql"]]
    low = partitions.month_start_id(today - selectors.CLOCK_LEEWAY)
    assert listed and all(f'"games_bet"."id" >= {low}' in sql for sql in listed), listed
    for since, until in (("0001-01-01 00:00:00+00:00", "9999-12-31 23:59:59+00:00"),  # the calendar's edges
                         ("0001-01-01 00:00:00+14:00", "9999-12-31 23:59:59-12:00")):
        response = as_support.get(admin_url(Bet), {"placed_at__gte": since, "placed_at__lt": until})
        assert response.status_code == 200 and len(response.context["cl"].result_list) == len(listed_ids)
    earlier = today - timedelta(days=400)
    response = as_support.get(admin_url(Bet), {"placed_at__gte": str(earlier), "placed_at__lt": str(today)})
    assert list(response.context["cl"].result_list) == []


# --- Every list -------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", [GameInstance, SeedPair, Round, Bet, AuditEvent, Account, LedgerEntry,
                                   SettlementBatch])
def test_every_list_says_what_its_search_matches(as_admin, model):
    response = as_admin.get(admin_url(model))
    model_admin = response.context["cl"].model_admin

    assert model_admin.search_help_text
    text = re.sub(r"\s+", " ", response.content.decode())
    assert str(model_admin.search_help_text).replace("“", "&ldquo;")[:30] in text \
        or str(model_admin.search_help_text)[:30] in text


def test_the_small_lists_still_search_any_part(as_support, two_players, game):
    player, other, first, second = two_players

    assert found(as_support, GameInstance, "main") == [game]
    assert found(as_support, Account, "layer-2") == [other]
    assert set(found(as_support, SeedPair, "main-table")) == set(SeedPair.objects.filter(game=game))
    assert found(as_support, SettlementBatch, "zz-nothing") == []
