"""The set-based services (rounds_open, bets_place_rounds, rounds_deal) write exactly what the
single-round services write, called one after another: each is played from the same state in a
transaction that is then rolled back, and the two results are compared row for row (ids and
times aside)."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction

from audit.models import AuditEvent
from core.errors import Conflict
from games import locks, services
from games.choices import GameStatus, RoundStatus
from games.models import Bet, Round, SeedPair
from games.signals import round_dealt
from wallet.models import Account, LedgerEntry

pytestmark = pytest.mark.django_db


@pytest.fixture
def tables(operator):
    """Two games on other shoes and payouts, beside each other."""
    return [services.game_create(actor=operator, slug=slug, name=slug, decks=decks, min_bet=Decimal("1.00"),
                                 max_bet=Decimal("100.00"), client_seed=f"{slug}-client")
            for slug, decks in (("table-a", 8), ("table-b", 1))]


@pytest.fixture
def accounts(funded_account):
    return [funded_account(f"p{number}", balance) for number, balance in ((1, "30.00"), (2, "500.00"))]


def snapshot(since_event: int) -> dict:
    """What the services wrote, with ids as positions (rounds and bets by id) and without times."""
    rounds = list(Round.objects.order_by("pk"))
    bets = list(Bet.objects.order_by("pk"))
    place = {("round", str(r.pk)): f"round#{i}" for i, r in enumerate(rounds)}
    place.update({("bet", str(b.pk)): f"bet#{i}" for i, b in enumerate(bets)})
    bet_place = {b.pk: i for i, b in enumerate(bets)}
    round_place = {r.pk: i for i, r in enumerate(rounds)}

    def renamed(value):
        if isinstance(value, dict) and "round" in value and isinstance(value["round"], int):
            return {**value, "round": round_place[value["round"]]}
        return value

    return {
        "rounds": [(r.game.slug, r.seed_pair.server_seed_hash, r.nonce, r.decks, r.status, r.cards, r.player_cards,
                    r.banker_cards, r.player_score, r.banker_score, r.natural, r.outcome, r.dealt_at is None)
                   for r in rounds],
        "bets": [(round_place[b.round_id], b.account.external_id, b.bet_type, b.stake, b.multiplier, b.status,
                  b.idempotency_key, b.payout) for b in bets],
        "pairs": [(p.server_seed_hash, p.next_nonce, p.retired_at is None, p.revealed_at is None)
                  for p in SeedPair.objects.order_by("pk")],
        "balances": dict(Account.objects.values_list("external_id", "balance")),
        "ledger": [(e.account.external_id, bet_place.get(e.bet_id), e.kind, e.amount, e.balance_after, e.reason)
                   for e in LedgerEntry.objects.order_by("pk")],
        "events": [(e.actor, e.action, place.get((e.object_type, e.object_id), (e.object_type, e.object_id)),
                    e.before, renamed(e.after), e.reason)
                   for e in AuditEvent.objects.filter(pk__gt=since_event).order_by("pk")],
    }


def played(play) -> tuple:
    """(what ``play()`` returned, snapshot of what it wrote), then all of it rolled back."""
    since = AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    with transaction.atomic():
        result = play()
        seen = snapshot(since)
        transaction.set_rollback(True)
    return result, seen


def bet(account, bet_type, stake, key):
    return {"account_external_id": account.external_id, "bet_type": bet_type, "stake": stake,
            "idempotency_key": key}


class TestRoundsOpen:
    def test_opens_what_round_open_opens_one_after_another(self, tables, integration):
        a, b = tables
        order = [a.pk, b.pk, a.pk, a.pk, b.pk]

        one_by_one, expected = played(lambda: [services.round_open(game_id=game_id, actor=integration)
                                               for game_id in order])
        together, seen = played(lambda: services.rounds_open(game_ids=order, actor=integration))

        assert seen == expected
        assert [(r.game_id, r.nonce) for r in together] == [(r.game_id, r.nonce) for r in one_by_one]
        assert [r.nonce for r in together] == [0, 0, 1, 2, 1]
        assert len(seen["events"]) == 5 and {event[1] for event in seen["events"]} == {"round.opened"}

    def test_an_inactive_game_opens_nothing(self, tables, operator, integration):
        a, b = tables
        services.game_update(game_id=b.pk, actor=operator, reason="maintenance",
                             changes={"status": GameStatus.SUSPENDED})
        with pytest.raises(Conflict) as refused:
            services.rounds_open(game_ids=[a.pk, b.pk], actor=integration)
        assert refused.value.code == "game_inactive"
        assert not Round.objects.exists()
        assert set(SeedPair.objects.values_list("next_nonce", flat=True)) == {0}

    def test_no_games_no_rounds(self, integration):
        assert services.rounds_open(game_ids=[], actor=integration) == []


class TestBetsPlaceRounds:
    def test_places_what_bets_place_places_round_after_round(self, tables, accounts, integration):
        a, b = tables
        p1, p2 = accounts
        first, second = (services.round_open(game_id=game.pk, actor=integration) for game in (a, b))
        services.bet_place(round_id=first.pk, client=integration, **bet(p2, "TIE", "5.00", "earlier"))
        items = {
            first.pk: {0: bet(p1, "BANKER", "25.00", "k1"), 1: bet(p2, "PLAYER", "100.00", "k2"),
                       2: bet(p2, "TIE", "5.00", "earlier"),           # a replay of the earlier bet
                       3: bet(p1, "PLAYER", "0.001", "k3")},            # refused: not a stake
            second.pk: {0: bet(p1, "BANKER", "10.00", "k4"),            # refused: p1 holds 5.00 by now
                        1: bet(p2, "PLAYER", "7.00", "k2"),             # the key of another bet: a conflict
                        2: bet(p2, "BANKER", "100.00", "k5"),
                        3: bet(p1, "PLAYER", "5.00", "k6")},
        }

        def round_by_round():
            return {round_id: services.bets_place(round_id=round_id, items=round_items, client=integration)
                    for round_id, round_items in sorted(items.items())}

        one_by_one, expected = played(round_by_round)
        together, seen = played(lambda: services.bets_place_rounds(items_by_round=items, client=integration))

        assert seen == expected
        summary = {round_id: {index: (outcome.created, outcome.bet and outcome.bet.idempotency_key,
                                      type(outcome.error).__name__) for index, outcome in outcomes.items()}
                   for round_id, outcomes in together.items()}
        assert summary == {round_id: {index: (outcome.created, outcome.bet and outcome.bet.idempotency_key,
                                              type(outcome.error).__name__) for index, outcome in outcomes.items()}
                           for round_id, outcomes in one_by_one.items()}
        assert summary[first.pk] == {0: (True, "k1", "NoneType"), 1: (True, "k2", "NoneType"),
                                     2: (False, "earlier", "NoneType"), 3: (False, None, "ValidationError")}
        assert summary[second.pk] == {0: (False, None, "ValidationError"), 1: (False, None, "Conflict"),
                                      2: (True, "k5", "NoneType"), 3: (True, "k6", "NoneType")}
        assert seen["balances"] == {"p1": Decimal("0.00"), "p2": Decimal("295.00")}

    def test_a_missing_round_writes_nothing(self, tables, accounts, integration):
        round_ = services.round_open(game_id=tables[0].pk, actor=integration)
        with pytest.raises(Round.DoesNotExist):
            services.bets_place_rounds(items_by_round={round_.pk: {0: bet(accounts[0], "TIE", "1.00", "k1")},
                                                       round_.pk + 1000: {}}, client=integration)
        assert not Bet.objects.exists() and not LedgerEntry.objects.filter(kind="STAKE").exists()


class TestRoundsDeal:
    def test_deals_what_round_deal_deals_with_the_reveals_it_makes(self, tables, accounts, operator, integration):
        a, b = tables
        rounds = [services.round_open(game_id=game.pk, actor=integration) for game in (a, b, a, b)]
        services.bets_place(round_id=rounds[0].pk, items={0: bet(accounts[1], "BANKER", "20.00", "k1")},
                            client=integration)
        # a's pair is revealed once its rounds are dealt
        services.seed_rotate(game_id=a.pk, actor=operator, reason="rotation")
        services.round_deal(round_id=rounds[3].pk, actor=integration)  # dealt already: left as it is
        ids = [round_.pk for round_ in rounds]

        one_by_one, expected = played(lambda: [services.round_deal(round_id=round_id, actor=integration)
                                               for round_id in ids])
        together, seen = played(lambda: services.rounds_deal(round_ids=list(reversed(ids)), actor=integration))

        assert seen == expected
        assert [r.pk for r in together] == ids  # by id
        assert [r.cards for r in together] == [r.cards for r in one_by_one]
        assert {r[4] for r in seen["rounds"]} == {RoundStatus.DEALT}
        actions = [event[1] for event in seen["events"]]
        assert actions.count("round.dealt") == 3 and actions.count("seed_pair.revealed") == 1
        assert [pair[3] for pair in seen["pairs"]] == [False, True, True]  # a's first pair revealed

    def test_sends_one_message_for_its_rounds_once_committed(self, tables, integration,
                                                             django_capture_on_commit_callbacks):
        sent = []

        def receiver(sender, round_ids, **kwargs):
            sent.append(round_ids)

        rounds = services.rounds_open(game_ids=[tables[0].pk, tables[1].pk], actor=integration)
        round_dealt.connect(receiver, sender=Round)
        try:
            with django_capture_on_commit_callbacks(execute=True):
                services.rounds_deal(round_ids=[round_.pk for round_ in rounds], actor=integration)
                assert sent == []
        finally:
            round_dealt.disconnect(receiver, sender=Round)
        assert sent == [[round_.pk for round_ in rounds]]
        # The settlement's receiver got the same message: the rounds are settled.
        assert set(Round.objects.values_list("status", flat=True)) == {RoundStatus.SETTLED}

    def test_a_round_that_cannot_be_dealt_deals_none(self, tables, operator, integration):
        first, second = services.rounds_open(game_ids=[tables[0].pk, tables[0].pk], actor=integration)
        services.round_void(round_id=second.pk, actor=operator, reason="table fault")
        with pytest.raises(Conflict):
            services.rounds_deal(round_ids=[first.pk, second.pk], actor=integration)
        assert Round.objects.get(pk=first.pk).status == RoundStatus.OPEN
        assert not AuditEvent.objects.filter(action="round.dealt").exists()
        with pytest.raises(Round.DoesNotExist, match=str(second.pk + 1000)):
            services.rounds_deal(round_ids=[first.pk, second.pk + 1000], actor=integration)
        assert Round.objects.get(pk=first.pk).status == RoundStatus.OPEN
        assert services.rounds_deal(round_ids=[], actor=integration) == []


class TestLocks:
    def test_active_pairs_by_game_without_retired_ones(self, tables, operator):
        a, b = tables
        retired, new = services.seed_rotate(game_id=a.pk, actor=operator, reason="rotation")
        with transaction.atomic():
            pairs = locks.lock_active_seed_pairs([b.pk, a.pk, a.pk])
        assert pairs == {a.pk: new, b.pk: SeedPair.objects.get(game=b)}
        assert retired not in pairs.values()

    def test_pairs_and_rounds_of_rounds_by_id(self, tables, integration, operator):
        a, b = tables
        rounds = services.rounds_open(game_ids=[b.pk, a.pk, b.pk], actor=integration)
        _retired, new = services.seed_rotate(game_id=a.pk, actor=operator, reason="rotation")
        ids = [round_.pk for round_ in reversed(rounds)]
        with transaction.atomic():
            locked = locks.lock_rounds(ids)
            pairs = locks.lock_seed_pairs(round_.seed_pair_id for round_ in locked)
            shared = locks.share_rounds(ids)
        assert list(pairs) == sorted({round_.seed_pair_id for round_ in rounds})
        assert [round_.seed_pair for round_ in locked] == [pairs[round_.seed_pair_id] for round_ in locked]
        assert new.pk not in pairs
        assert [round_.pk for round_ in locked] == sorted(ids)
        assert list(shared) == sorted(ids) and shared[rounds[1].pk].game == a
        with pytest.raises(Round.DoesNotExist, match=str(max(ids) + 1)):
            locks.share_rounds([*ids, max(ids) + 1])


def test_an_unknown_bet_field_is_refused_as_by_bets_place(tables, accounts, integration):
    round_ = services.round_open(game_id=tables[0].pk, actor=integration)
    outcomes = services.bets_place_rounds(
        items_by_round={round_.pk: {0: bet(accounts[0], "SIDE", "1.00", "k1")}}, client=integration)
    assert isinstance(outcomes[round_.pk][0].error, ValidationError)
    assert not Bet.objects.exists()
