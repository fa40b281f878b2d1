"""Helpers of the aggregate and dashboard tests: the settlement path (which keeps the aggregates),
a controllable clock, random play through the real services, and a brute force over raw rows."""

import random
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from games import services as game_services
from games.choices import RoundStatus
from games.engine.stats import natural_probability  # noqa: F401 (re-exported for the tests)
from games.models import Bet, GameInstance, Round
from settlement import aggregates, services
from settlement.models import ActiveAccountMonth, DailyBetTotals, DailyRoundTotals, ReturningAccounts


@pytest.fixture
def settle():
    """settle(**kwargs) runs settlement batches until none is left, aggregates included."""

    def run(limit=None, round_ids=None):
        batches = []
        while True:
            kwargs = {"round_ids": round_ids}
            if limit is not None:
                kwargs["limit"] = limit
            batch = services.settlement_run(**kwargs)
            if batch is None:
                return batches
            batches.append(batch)
            if round_ids is not None:
                return batches

    return run


class Clock:
    """timezone.now() for the test: whole milliseconds, one millisecond later at every call."""

    def __init__(self, start: datetime):
        self.value = start

    def now(self):
        value = self.value
        self.value += timedelta(milliseconds=1)
        return value

    def set(self, value: datetime):
        self.value = value.replace(microsecond=value.microsecond // 1000 * 1000)

    def advance(self, **delta):
        self.set(self.value + timedelta(**delta))


@pytest.fixture
def clock(monkeypatch):
    clock = Clock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    monkeypatch.setattr(timezone, "now", clock.now)
    return clock


def play_random(rng: random.Random, *, games, accounts, integration, operator, clock, settle, days=4,
                rounds_per_day=12):
    """Random rounds and bets over several days through the real services: configuration changes,
    voids, rounds left open or dealt, settlement in batches of random size, some just after midnight."""
    start = clock.value.replace(hour=0, minute=0, second=0, microsecond=0)
    for day in range(days):
        clock.set(start + timedelta(days=day, hours=rng.randint(8, 20), minutes=rng.randint(0, 59)))
        if day == 1:
            game_services.game_update(game_id=games[0].pk, actor=operator, reason="promotion",
                                      changes={"tie_multiplier": Decimal("8.5"), "banker_multiplier": Decimal("1.96")})
        if day == 2:
            game_services.game_update(game_id=games[1].pk, actor=operator, reason="bigger shoe",
                                      changes={"decks": 2, "player_multiplier": Decimal("2.01")})
        for _ in range(rounds_per_day):
            game = rng.choice(games)
            round_ = game_services.round_open(game_id=game.pk, actor=integration)
            for number in range(rng.choice([0, 1, 2, 3, 4, 5])):
                account = rng.choice(accounts)
                stake = Decimal(rng.choice(["1.00", "2.50", "5.00", "10.00", "1.99", "33.33", "7.77"]))
                game_services.bet_place(round_id=round_.pk, account_external_id=account.external_id,
                                        bet_type=rng.choice(["PLAYER", "BANKER", "BANKER", "TIE"]), stake=stake,
                                        idempotency_key=f"r{round_.pk}-{number}", client=integration)
            fate = rng.random()
            if fate < 0.08:
                game_services.round_void(round_id=round_.pk, actor=operator, reason="misdeal")
                continue
            game_services.round_deal(round_id=round_.pk, actor=integration)
            if fate < 0.14:
                game_services.round_void(round_id=round_.pk, actor=operator, reason="dealer error")
            clock.advance(seconds=rng.randint(1, 90), milliseconds=rng.randint(0, 999))
            if rng.random() < 0.3:
                settle(limit=rng.randint(1, 4))
        # Dealt just before midnight, settled just after: the settlement day is the next day.
        clock.set(start + timedelta(days=day, hours=23, minutes=59, seconds=59, milliseconds=500))
        game = rng.choice(games)
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        game_services.bet_place(round_id=round_.pk, account_external_id=accounts[0].external_id,
                                bet_type="BANKER", stake=Decimal("3.00"), idempotency_key=f"late-{round_.pk}",
                                client=integration)
        game_services.round_deal(round_id=round_.pk, actor=integration)
        clock.advance(seconds=1)
        settle(limit=rng.randint(2, 7))
    # Left behind: one round open, one dealt and not settled.
    game_services.round_open(game_id=games[0].pk, actor=integration)
    round_ = game_services.round_open(game_id=games[-1].pk, actor=integration)
    game_services.bet_place(round_id=round_.pk, account_external_id=accounts[-1].external_id, bet_type="TIE",
                            stake=Decimal("1.00"), idempotency_key=f"left-{round_.pk}", client=integration)
    game_services.round_deal(round_id=round_.pk, actor=integration)


def brute_force():
    """The three aggregate tables computed in Python over the raw rows, one bet and round at a time."""
    bets = defaultdict(lambda: [0, 0, 0, 0, 0, 0, 0])
    rounds = defaultdict(lambda: [0, 0, 0, 0, 0, 0, 0])
    accounts = set()
    for round_ in Round.objects.filter(status=RoundStatus.SETTLED).order_by("pk"):
        day = round_.settled_at.astimezone(UTC).date()
        lag = round((round_.settled_at - round_.dealt_at).total_seconds() * 1000)
        row = rounds[(day, round_.game_id, round_.decks)]
        row[0] += 1
        row[1] += round_.outcome == "PLAYER"
        row[2] += round_.outcome == "BANKER"
        row[3] += round_.outcome == "TIE"
        row[4] += bool(round_.natural)
        row[5] += lag
        row[6] = max(row[6], lag)
        for bet in Bet.objects.filter(round=round_).order_by("pk"):
            if bet.status == "HELD":
                continue  # counts nowhere until an operator settles it
            assert bet.status in ("WON", "LOST", "PUSH")
            row = bets[(day, round_.game_id, bet.bet_type)]
            row[0] += 1
            row[1] += bet.status == "WON"
            row[2] += bet.status == "LOST"
            row[3] += bet.status == "PUSH"
            row[4] += int(bet.stake * 100)
            row[5] += int(bet.payout * 100)
            row[6] += aggregates.expected_return_ucents(bet.stake, round_.decks, bet.bet_type, bet.multiplier,
                                                        bet.paytable)
            accounts.add((day, round_.game_id, bet.account_id))
    return ({key: tuple(value) for key, value in bets.items()},
            {key: tuple(value) for key, value in rounds.items()}, accounts)


def stored():
    bets = {(row.day, row.game_id, row.bet_type): (row.bets, row.won, row.lost, row.pushed, row.handle_cents,
                                                    row.paid_out_cents, row.expected_return_ucents)
            for row in DailyBetTotals.objects.all()}
    rounds = {(row.day, row.game_id, row.decks): (row.rounds, row.player_wins, row.banker_wins, row.ties,
                                                   row.naturals, row.lag_ms_sum, row.lag_ms_max)
              for row in DailyRoundTotals.objects.all()}
    accounts = {(row.month.replace(day=day), row.game_id, row.account_id)
                for row in ActiveAccountMonth.objects.all() for day in row.active_days()}
    return bets, rounds, accounts


def returning_brute_force(active) -> dict:
    """ReturningAccounts from the active (day, game, account) of brute_force(): each account's active
    days on each game and on any game of its currency, every day counted after the one before."""
    currency = dict(GameInstance.objects.values_list("pk", "currency"))
    days = defaultdict(set)
    for day, game, account in active:
        days[(currency[game], game, account)].add(day)
        days[(currency[game], None, account)].add(day)
    rows = Counter()
    for (code, game, _account), active_days in days.items():
        previous = None
        for day in sorted(active_days):
            rows[(code, game, day, previous)] += 1
            previous = day
    return dict(rows)


def returning_stored() -> dict:
    """The ReturningAccounts rows that count (a row brought down to 0 counts nothing)."""
    return {(row.currency, row.game_id, row.day, row.previous_day): row.accounts
            for row in ReturningAccounts.objects.exclude(accounts=0)}
