"""The daily aggregates: kept by the settlement path exactly as a brute force over the raw rows
gives them, rebuilt and checked by ``rebuild_aggregates``."""

import json
import math
import random
from datetime import UTC, date, datetime
from decimal import Decimal
from fractions import Fraction

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from games import services as game_services
from games.engine import (
    MAIN_BET_TYPES,
    REGISTRY,
    SIDE_BET_TYPES,
    BetType,
    Multipliers,
    bet_odds,
    exact_odds,
    return_to_player,
)
from games.models import Bet, Round
from settlement import aggregates
from settlement.models import ActiveAccountMonth, DailyBetTotals, DailyRoundTotals, ReturningAccounts
from tests.aggregates_helpers import (  # noqa: F401
    brute_force,
    clock,
    play_random,
    returning_brute_force,
    returning_stored,
    settle,
    stored,
)
from tests.settlement.test_side_bets_end_to_end import MAIN_PAYS_ON, PUSHES, SIDE_BETS

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(game, operator, integration, funded_account, clock, settle):  # noqa: F811
    games = [
        game,
        game_services.game_create(actor=operator, slug="single-deck", name="Single deck", decks=1,
                                  min_bet="0.50", max_bet="100.00", tie_multiplier="10.5"),
        game_services.game_create(actor=operator, slug="six-deck", name="Six decks", decks=6,
                                  min_bet="0.50", max_bet="100.00", banker_multiplier="1.9"),
    ]
    accounts = [funded_account(f"player-{n}", "5000.00") for n in range(5)]
    return {"games": games, "accounts": accounts, "operator": operator, "integration": integration}


def play(world, clock, settle, seed, **kwargs):  # noqa: F811
    play_random(random.Random(seed), games=world["games"], accounts=world["accounts"],
                integration=world["integration"], operator=world["operator"], clock=clock, settle=settle, **kwargs)


def assert_matches_brute_force():
    expected_bets, expected_rounds, expected_accounts = brute_force()
    stored_bets, stored_rounds, stored_accounts = stored()
    assert stored_rounds == expected_rounds
    assert stored_accounts == expected_accounts
    assert stored_bets == expected_bets
    assert returning_stored() == returning_brute_force(expected_accounts)


def test_rtp_coefficients_are_the_engine_return_to_player():
    for decks in (1, 6, 8):
        for bet_type in BetType.ALL:
            for multiplier in ("1.0", "1.95", "2", "8.5", "11", "999.9999"):
                m = Decimal(multiplier)
                expected = return_to_player(exact_odds(decks), bet_type, Multipliers(m, m, m))
                assert aggregates.rtp(decks, bet_type, m) == expected


def test_expected_return_rounds_half_up_to_a_millionth_of_a_cent():
    value = aggregates.expected_return_ucents(Decimal("10.00"), 8, "BANKER", Decimal("1.95"))
    exact = Fraction(10) * aggregates.rtp(8, "BANKER", Decimal("1.95")) * aggregates.UCENTS_PER_UNIT
    assert abs(value - exact) <= Fraction(1, 2)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_aggregates_equal_a_brute_force_over_random_play(world, clock, settle, seed):  # noqa: F811
    play(world, clock, settle, seed)
    assert Round.objects.filter(status="SETTLED").count() > 20
    assert Round.objects.filter(status="DEALT").exists() and Round.objects.filter(status="VOID").exists()
    assert Bet.objects.values("multiplier").distinct().count() > 3  # configuration changes happened
    assert DailyRoundTotals.objects.values("decks").distinct().count() >= 3
    assert DailyBetTotals.objects.values("day").distinct().count() >= 4
    assert_matches_brute_force()


def test_a_batch_counts_once_even_when_settlement_is_asked_again(world, clock, settle):  # noqa: F811
    play(world, clock, settle, 4, days=1, rounds_per_day=6)
    before = stored()
    settle()  # the dealt round left behind settles now; nothing else changes
    dealt_left = Round.objects.filter(status="DEALT").count()
    assert dealt_left == 0
    settle()
    assert stored() != before
    assert_matches_brute_force()
    # Recording rounds that were already settled again is what the settlement path never does;
    # recording rounds that are not SETTLED changes nothing.
    open_round = game_services.round_open(game_id=world["games"][0].pk, actor=world["integration"])
    snapshot = stored()
    aggregates.record_settled_rounds([open_round.pk])
    aggregates.record_settled_rounds([])
    assert stored() == snapshot


@pytest.mark.parametrize("path", ["batch", "bet_by_bet"])
def test_a_batch_upserts_its_aggregate_rows_last(world, clock, settle, path):  # noqa: F811
    # Every batch of a game and day adds to the same rows and holds them until it commits: they
    # are its last statements, so other batches wait for its commit only. A round settled bet by
    # bet (after it failed alone) is such a batch too.
    from settlement import services

    play(world, clock, settle, 2, days=1, rounds_per_day=2)
    round_ = game_services.round_open(game_id=world["games"][0].pk, actor=world["integration"])
    for number, bet_type in enumerate(["PLAYER", "BANKER"]):
        game_services.bet_place(round_id=round_.pk, account_external_id="player-0", bet_type=bet_type,
                                stake="2.00", idempotency_key=f"last-{number}", client=world["integration"])
    game_services.round_deal(round_id=round_.pk, actor=world["integration"])
    tables = [model._meta.db_table
              for model in (ReturningAccounts, DailyBetTotals, DailyRoundTotals, ActiveAccountMonth)]
    with CaptureQueriesContext(connection) as queries:
        if path == "batch":
            assert services.settlement_run(round_ids=[round_.pk], worker="w") is not None
        else:
            assert services.round_settle_bet_by_bet(round_id=round_.pk, worker="w") is not None
    statements = [query["sql"] for query in queries.captured_queries
                  if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]
    inserted_into = [next((table for table in tables if table in sql), None) for sql in statements[-len(tables):]]
    assert inserted_into == tables, statements[-len(tables):]
    assert not any(table in sql for sql in statements[:-len(tables)] for table in tables)


def test_a_rolled_back_batch_leaves_no_aggregates(world, clock, settle, monkeypatch):  # noqa: F811
    play(world, clock, settle, 5, days=1, rounds_per_day=4)
    settle()
    round_ = game_services.round_open(game_id=world["games"][0].pk, actor=world["integration"])
    game_services.bet_place(round_id=round_.pk, account_external_id="player-0", bet_type="PLAYER",
                            stake="2.00", idempotency_key="boom", client=world["integration"])
    game_services.round_deal(round_id=round_.pk, actor=world["integration"])
    snapshot = stored()
    from settlement import services

    def fail(*args, **kwargs):
        raise RuntimeError("the audit write failed")

    monkeypatch.setattr(services, "audit_record", fail)
    with pytest.raises(RuntimeError):
        settle()
    assert stored() == snapshot
    assert Round.objects.get(pk=round_.pk).status == "DEALT"


class TestRebuild:
    def test_check_passes_and_rebuild_changes_nothing(self, world, clock, settle, capsys):  # noqa: F811
        play(world, clock, settle, 6)
        before = stored()
        call_command("rebuild_aggregates", "--check")
        out = capsys.readouterr().out
        assert "agree" in out and "differ" not in out
        call_command("rebuild_aggregates")
        assert stored() == before
        call_command("rebuild_aggregates", "--check")

    @pytest.mark.parametrize("tamper", ["handle", "lag_max", "missing_round_row", "extra_account", "expected",
                                        "account_day"])
    def test_check_detects_a_tampered_aggregate(self, world, clock, settle, capsys, tamper):  # noqa: F811
        play(world, clock, settle, 7, days=2)
        good = stored()
        if tamper == "handle":
            DailyBetTotals.objects.filter(pk=DailyBetTotals.objects.order_by("pk").first().pk).update(
                handle_cents=F("handle_cents") + 1)
            table = "daily bet totals"
        elif tamper == "expected":
            DailyBetTotals.objects.filter(pk=DailyBetTotals.objects.order_by("-pk").first().pk).update(
                expected_return_ucents=F("expected_return_ucents") - 1000)
            table = "daily bet totals"
        elif tamper == "lag_max":
            DailyRoundTotals.objects.filter(pk=DailyRoundTotals.objects.order_by("pk").first().pk).update(
                lag_ms_max=F("lag_ms_max") + 5)
            table = "daily round totals"
        elif tamper == "missing_round_row":
            DailyRoundTotals.objects.filter(pk=DailyRoundTotals.objects.order_by("pk").first().pk).delete()
            table = "daily round totals"
        elif tamper == "account_day":
            row = ActiveAccountMonth.objects.order_by("pk").first()
            ActiveAccountMonth.objects.filter(pk=row.pk).update(days=row.days ^ (1 << 27))
            table = "active account months"
        else:
            row = ActiveAccountMonth.objects.order_by("pk").first()
            ActiveAccountMonth.objects.create(month=row.month.replace(year=row.month.year + 1), game_id=row.game_id,
                                              account_id=row.account_id, days=1)
            table = "active account months"
        with pytest.raises(CommandError) as error:
            call_command("rebuild_aggregates", "--check")
        assert error.value.returncode == 1
        out = capsys.readouterr().out
        assert f"{table}:" in out and "differ" in out
        # Without --check the command reports the same and rebuilds: then all agrees again.
        call_command("rebuild_aggregates")
        assert "differ" in capsys.readouterr().out
        assert stored() == good
        call_command("rebuild_aggregates", "--check")

    def test_check_on_empty_tables(self, db, capsys):
        call_command("rebuild_aggregates", "--check")
        assert "agree" in capsys.readouterr().out

    def test_rebuild_fills_empty_tables(self, world, clock, settle):  # noqa: F811
        play(world, clock, settle, 8, days=2)
        good = stored()
        returning = returning_stored()
        for model in (DailyBetTotals, DailyRoundTotals, ReturningAccounts, ActiveAccountMonth):
            model.objects.all().delete()
        with pytest.raises(CommandError):
            call_command("rebuild_aggregates", "--check")
        call_command("rebuild_aggregates")
        assert stored() == good
        assert returning_stored() == returning and returning
        assert date.today  # the tables hold the UTC days of settlement


def test_active_accounts_over_any_period_across_months(world, clock, settle):  # noqa: F811
    from datetime import datetime

    from settlement import reports

    clock.set(datetime(2026, 1, 29, 9, 0, tzinfo=UTC))
    play(world, clock, settle, 9, days=5, rounds_per_day=8)
    raw = brute_force()[2]  # {(day, game, account)}
    days = sorted({day for day, _game, _account in raw})
    assert days[0].month == 1 and days[-1].month == 2
    game_ids = [game.pk for game in world["games"]]
    assert {game.currency for game in world["games"]} == {"USD"}
    for i, start in enumerate(days):
        for end in days[i:]:
            inside = {(game, account) for day, game, account in raw if start <= day <= end}
            per_game, overall = reports.active_accounts("USD", start, end)
            assert overall == len({account for _game, account in inside}), (start, end)
            for game in game_ids:
                expected = len({a for g, a in inside if g == game})
                assert per_game.get(game, 0) == expected, (start, end, game)
                assert reports.active_accounts("USD", start, end, game_id=game) == (
                    {game: expected} if expected else {}, expected)
    assert reports.active_accounts("EUR", days[0], days[-1]) == ({}, 0)


@pytest.mark.owner  # the fault is a trigger, which only the tables' owner may create
def test_held_bets_count_only_once_settled_on_their_rounds_day(world, clock, settle, monkeypatch,  # noqa: F811
                                                                 capsys):
    from games.choices import BetStatus
    from settlement import services
    from tests.settlement.faults import AccountFault

    play(world, clock, settle, 10, days=2, rounds_per_day=6)
    frozen = world["accounts"][1]
    round_ = game_services.round_open(game_id=world["games"][0].pk, actor=world["integration"])
    for number, bet_type in enumerate(["PLAYER", "BANKER", "TIE"]):
        for account in (frozen, world["accounts"][2]):
            game_services.bet_place(round_id=round_.pk, account_external_id=account.external_id, bet_type=bet_type,
                                    stake="4.00", idempotency_key=f"held-{account.pk}-{number}",
                                    client=world["integration"])
    game_services.round_deal(round_id=round_.pk, actor=world["integration"])
    fault = AccountFault(monkeypatch, frozen.pk).install()
    services.settlement_sweep(worker="w")
    held = list(Bet.objects.filter(status=BetStatus.HELD).order_by("pk"))
    assert held
    assert_matches_brute_force()  # the held bets count nowhere
    call_command("rebuild_aggregates", "--check")
    fault.remove()
    clock.advance(days=2)  # settled by an operator two days later
    for bet in held:
        services.held_bet_settle(bet_id=bet.pk, actor=world["operator"], reason="unfrozen")
    assert_matches_brute_force()  # counted now, on their round's settlement day
    call_command("rebuild_aggregates", "--check")
    assert "differ" not in capsys.readouterr().out


# --- Side bets: every bet type, on its own terms -------------------------------------------------

# The second day's paytables: bets of one side bet type on one day then carry two different ones.
SIDE_BETS_LATER = {**SIDE_BETS, "PLAYER_PAIR": {"PAIR": "11.25"}, "EITHER_PAIR": {"TWO_PAIRS": "21", "ONE_PAIR": "6"},
                   "DRAGON_BONUS_BANKER": {"NATURAL_WIN": "2", "WIN_BY_9": "26", "WIN_BY_8": "11", "WIN_BY_7": "7",
                                           "WIN_BY_6": "5", "WIN_BY_5": "3", "WIN_BY_4": "2", "NATURAL_TIE": "1"}}


def exact_ucents(stake, decks: int, bet_type: str, multiplier, paytable) -> int:
    """A bet's theoretical return in 10^-8 of its currency, rounded half up, from the exact event
    counts of its shoe and its own terms: worked out here, not by settlement.aggregates."""
    counts = bet_odds(decks)[bet_type]
    if paytable is None:
        paying = {MAIN_PAYS_ON[bet_type]: Fraction(Decimal(multiplier))}
    else:
        paying = {event: Fraction(Decimal(value)) for event, value in paytable.items()}
    weighed = sum(ways * (1 if event in PUSHES.get(bet_type, ()) else paying.get(event, 0))
                  for event, ways in counts.counts.items())
    value = Fraction(Decimal(stake)) * Fraction(weighed, counts.total) * 10**8
    return math.floor(value + Fraction(1, 2))


def test_the_expected_return_of_any_bet_in_sql_is_the_exact_one_rounded_half_up(db):
    rng = random.Random(41)
    cases = []
    for bet_type in REGISTRY:
        for decks in (1, 2, 6, 8):
            for _ in range(6):
                stake = Decimal(rng.randint(1, 10**7)).scaleb(-rng.choice([0, 2, 3, 8]))  # up to BTC's 8 places
                if bet_type in MAIN_BET_TYPES:
                    multiplier, paytable = Decimal(rng.choice(["1.95", "2", "8.5", "9.0001", "1000"])), None
                else:
                    events = [event for event in REGISTRY[bet_type].events if event not in PUSHES.get(bet_type, ())]
                    paying = rng.sample(events, rng.randint(1, len(events)))
                    paytable = {event: str(Decimal(rng.randint(10_000, 10_000_000)).scaleb(-4)) for event in paying}
                    paytable.update({event: "1" for event in PUSHES.get(bet_type, ()) if rng.random() < 0.5})
                    multiplier = max(Decimal(value) for value in paytable.values())
                cases.append((stake, decks, bet_type, multiplier, paytable))
    cte, cte_params = aggregates._odds_cte((1, 2, 6, 8))
    rows = ", ".join(["(%s, %s, CAST(%s AS NUMERIC), %s, CAST(%s AS NUMERIC), CAST(%s AS JSONB))"] * len(cases))
    params = []
    for number, (stake, decks, bet_type, multiplier, paytable) in enumerate(cases):
        params += [number, decks, stake, bet_type, multiplier, None if paytable is None else json.dumps(paytable)]
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH {cte}, bets(n, decks, stake, bet_type, multiplier, paytable) AS (VALUES {rows}) "
            f"SELECT b.n, {aggregates._expected_return_sql('b.stake', 'b.multiplier', 'b.paytable')} "
            f"FROM bets b JOIN shoe_odds c ON c.decks = b.decks AND c.bet_type = b.bet_type ORDER BY b.n",
            cte_params + params)
        computed = [value for _n, value in cursor.fetchall()]
    assert len(computed) == len(cases)
    for value, (stake, decks, bet_type, multiplier, paytable) in zip(computed, cases, strict=True):
        assert value == exact_ucents(stake, decks, bet_type, multiplier, paytable), (stake, decks, bet_type, paytable)
        assert value == aggregates.expected_return_ucents(stake, decks, bet_type, multiplier, paytable)


@pytest.fixture
def side_world(game, operator, integration, funded_account, clock, settle):  # noqa: F811
    single = game_services.game_create(actor=operator, slug="single-deck", name="Single deck", decks=1,
                                       min_bet="0.50", max_bet="100.00", tie_multiplier="10.5")
    games = [game, single]
    for offering in games:
        game_services.game_update(game_id=offering.pk, actor=operator, reason="side bets",
                                  changes={"side_bets": SIDE_BETS})
    accounts = [funded_account(f"player-{n}", "50000.00") for n in range(3)]
    return {"games": games, "accounts": accounts, "operator": operator, "integration": integration}


def play_side_bets(world, clock, settle, seed, days=2, rounds_per_day=8):  # noqa: F811
    """Every bet type on every round, one bet alone (bet_place) and the rest in bulk (bets_place);
    the rounds of a day dealt together (rounds_deal) and settled in batches; the side bets'
    paytables changed on the second day."""
    rng = random.Random(seed)
    integration = world["integration"]
    for day in range(days):
        clock.set(datetime(2026, 3, 1 + day, rng.randint(8, 20), rng.randint(0, 59), tzinfo=UTC))
        if day == 1:
            game_services.game_update(game_id=world["games"][0].pk, actor=world["operator"], reason="promotion",
                                      changes={"side_bets": SIDE_BETS_LATER})
        round_ids = []
        for number in range(rounds_per_day):
            round_ = game_services.round_open(game_id=world["games"][number % 2].pk, actor=integration)
            items = {}
            for index, bet_type in enumerate(REGISTRY):
                if rng.random() < 0.2:
                    continue
                items[index] = {"account_external_id": rng.choice(world["accounts"]).external_id,
                                "bet_type": bet_type, "idempotency_key": f"{round_.pk}-{bet_type}",
                                "stake": Decimal(rng.choice(["1.00", "2.50", "5.00", "1.99", "33.33", "7.77"]))}
            alone = items.pop(min(items), None)
            if alone is not None:
                game_services.bet_place(round_id=round_.pk, client=integration, **alone)
            outcomes = game_services.bets_place(round_id=round_.pk, items=items, client=integration)
            assert all(outcome.error is None for outcome in outcomes.values())
            round_ids.append(round_.pk)
            clock.advance(seconds=rng.randint(1, 30))
        game_services.rounds_deal(round_ids=round_ids, actor=integration)
        clock.advance(seconds=rng.randint(1, 60))
        settle(limit=rng.randint(2, 5))


def independent_bet_totals() -> dict:
    """DailyBetTotals worked out bet by bet in Python: {(day, game, bet type): (bets, won, lost,
    pushed, handle, paid out, theoretical return in 10^-8 of a dollar)}."""
    totals = {}
    for bet in Bet.objects.filter(status__in=["WON", "LOST", "PUSH"]).select_related("round"):
        key = (bet.round.settled_at.astimezone(UTC).date(), bet.round.game_id, bet.bet_type)
        row = totals.setdefault(key, [0] * 7)
        for n, value in enumerate((1, bet.status == "WON", bet.status == "LOST", bet.status == "PUSH",
                                   int(bet.stake * 100), int(bet.payout * 100),
                                   exact_ucents(bet.stake, bet.round.decks, bet.bet_type, bet.multiplier,
                                                bet.paytable))):
            row[n] += value
    return {key: tuple(row) for key, row in totals.items()}


def test_side_bets_count_in_the_aggregates_on_their_own_paytables(side_world, clock, settle, capsys):  # noqa: F811
    play_side_bets(side_world, clock, settle, 12)
    settle()
    side = Bet.objects.filter(bet_type__in=SIDE_BET_TYPES)
    assert set(side.values_list("status", flat=True)) <= {"WON", "LOST", "PUSH"}
    assert {"WON", "LOST"} <= set(side.values_list("status", flat=True))
    assert set(side.values_list("bet_type", flat=True)) == set(SIDE_BET_TYPES)
    # One type, one day, one game: bets on two paytables.
    assert side.filter(bet_type="PLAYER_PAIR", round__game=side_world["games"][0]).values(
        "paytable").distinct().count() == 2
    stored_bets = stored()[0]
    assert {bet_type for _day, _game, bet_type in stored_bets} == set(REGISTRY)
    assert stored_bets == independent_bet_totals()
    assert_matches_brute_force()
    call_command("rebuild_aggregates", "--check")
    assert "differ" not in capsys.readouterr().out
    before = stored()
    call_command("rebuild_aggregates")
    assert stored() == before


def test_the_dashboard_lists_every_bet_type_with_play(side_world, clock, settle):  # noqa: F811
    from settlement import reports
    from tests.admin.conftest import client_for

    play_side_bets(side_world, clock, settle, 13, days=1, rounds_per_day=6)
    settle()
    board = reports.dashboard(start=date(2026, 3, 1), end=date(2026, 3, 2), currency="USD")
    assert [row.bet_type for row in board.bet_types] == list(REGISTRY)  # in the registry's order
    totals = independent_bet_totals()
    for row in board.bet_types:
        mine = [value for key, value in totals.items() if key[2] == row.bet_type]
        assert row.bets == sum(value[0] for value in mine) > 0
        assert row.handle_cents == sum(value[4] for value in mine)
        assert row.paid_out_cents == sum(value[5] for value in mine)
        assert row.expected_return_ucents == sum(value[6] for value in mine)
        assert row.theoretical_rtp == float(Fraction(row.expected_return_ucents, row.handle_cents * 10**6))
    assert sum(row.bets for row in board.bet_types) == board.overall.bets
    assert next(row for row in board.bet_types if row.bet_type == "PERFECT_PAIR").label == "Perfect pair"
    assert set(board.series["rtp_by_type"]) == set(REGISTRY)
    assert board.series["rtp_by_type"]["DRAGON_BONUS_BANKER"]["label"] == "Dragon Bonus Banker"
    # One game alone, and a period with main bets only: the main bets are listed, no side bet.
    alone = reports.dashboard(start=date(2026, 3, 1), end=date(2026, 3, 2), currency="USD",
                              game=side_world["games"][1])
    assert {row.bet_type for row in alone.bet_types} == set(REGISTRY)
    empty = reports.dashboard(start=date(2026, 4, 1), end=date(2026, 4, 2), currency="USD")
    assert [row.bet_type for row in empty.bet_types] == list(MAIN_BET_TYPES)
    # The page itself.
    response = client_for(side_world["operator"]).get("/admin/dashboard/", {"start": "2026-03-01",
                                                                             "end": "2026-03-02"})
    assert response.status_code == 200
    content = response.content.decode()
    for bet_type in REGISTRY:
        assert f'data-bet-type="{bet_type}"><td>{REGISTRY[bet_type].label}</td>' in content


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_returning_accounts_are_exact_in_whatever_order_days_are_recorded(world, clock, settle, monkeypatch,  # noqa: F811
                                                                           seed):
    # Settled first with nothing recorded; then recorded in random groups of rounds in random order,
    # so days arrive between, before and after those recorded (as a held bet settled later does),
    # several at once for one account. After every group: exactly what its rounds' raw rows give.
    record = aggregates.record_settled_rounds
    monkeypatch.setattr(aggregates, "record_settled_rounds", lambda round_ids, **kwargs: None)
    clock.set(datetime(2026, 1, 27, 9, 0, tzinfo=UTC))
    play(world, clock, settle, seed, days=7, rounds_per_day=6)
    rounds = list(Round.objects.filter(status="SETTLED").values_list("pk", flat=True))
    rng = random.Random(seed)
    rng.shuffle(rounds)
    recorded, between = [], 0
    while rounds:
        group = rounds[:rng.randint(1, 6)]
        rounds = rounds[len(group):]
        record(group)
        recorded += group
        active = {(bet.round.settled_at.astimezone(UTC).date(), bet.round.game_id, bet.account_id)
                  for bet in Bet.objects.filter(round_id__in=recorded).select_related("round")}
        assert returning_stored() == returning_brute_force(active)
        between += ReturningAccounts.objects.filter(accounts=0).exists()
    assert {game for _day, game, _account in active} == {game.pk for game in world["games"]}
    assert len({day for day, _game, _account in active}) >= 7
    assert between, "some day was recorded between two others, and a link it broke came down to 0"
    assert all(check.agrees for check in aggregates.check())
