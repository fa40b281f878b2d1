"""Settlement reads and writes only the bets' partitions its rounds' bets can be in: the planner
prunes the others (the legacy partition, the months ahead) at plan time, as EXPLAIN shows."""

import re
from datetime import UTC, timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from psycopg import sql as psql

from dbutils import partitions
from games.models import Bet
from games.selectors import CLOCK_LEEWAY, bet_ids_placed
from settlement import services
from settlement.receivers import dealt_rounds_left_to_the_sweep
from tests.settlement.test_services import open_round_with_bets

pytestmark = pytest.mark.django_db

BETS = Bet._meta.db_table


def months_of(start, end) -> set:
    """The bets' partitions of the months from ``start`` to ``end`` (UTC) with the clocks' leeway:
    one, or two in the minutes around the first of a month."""
    start, end = (start - CLOCK_LEEWAY).astimezone(UTC).date(), (end + CLOCK_LEEWAY).astimezone(UTC).date()
    names, month = set(), start.replace(day=1)
    while month <= end:
        names.add(partitions.partition_name(BETS, month))
        month = partitions.next_month(month)
    return names


def scanned(statement: str) -> set:
    """The bets' partitions EXPLAIN names for ``statement`` (planned, not run)."""
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {statement}")
        plan = "\n".join(line for (line,) in cursor.fetchall())
    every = [f"{BETS}_legacy", *partitions.month_partitions(BETS).values()]
    return {name for name in every if name in plan}


@pytest.mark.parametrize("one_statement", [True, False], ids=["one_statement", "plain_path"])
def test_settlement_scans_only_this_months_bets(game, integration, funded_account, settings, one_statement):
    settings.SETTLEMENT_BETS_IN_ONE_STATEMENT = one_statement
    funded_account("a", "100.00")
    round_ = open_round_with_bets(game, integration, [("a", "PLAYER", "1.00"), ("a", "BANKER", "2.00")])
    assert len(partitions.month_partitions(BETS)) >= 3  # this month and two ahead, besides the legacy one

    with CaptureQueriesContext(connection) as queries:
        assert services.settlement_run(round_ids=[round_.pk]).bets == 2
    this_month = months_of(round_.opened_at, timezone.now())

    on_bets = [q["sql"] for q in queries.captured_queries
               if f'"{BETS}"' in q["sql"] or f"{BETS} AS b" in q["sql"]]
    reads = [s for s in on_bets if s.lstrip().upper().startswith("SELECT") and "round_id" in s]
    # (The plain path's UPDATE runs once per bet, by id: "%s" as recorded, one partition each.)
    writes = [s for s in on_bets if s.lstrip().upper().startswith("UPDATE") and "%s" not in s]
    assert reads and (writes or not one_statement), on_bets
    for statement in reads + writes:
        assert scanned(statement) == this_month, statement


def test_the_legacy_partition_is_read_only_for_rounds_opened_before_its_last_bet(game, integration, funded_account):
    funded_account("a", "100.00")
    open_round_with_bets(game, integration, [("a", "PLAYER", "1.00")])
    now = timezone.now()
    legacy_end = partitions.legacy_end(BETS)
    recent = bet_ids_placed(since=now - timedelta(minutes=5), until=now)
    assert scanned(str(Bet.objects.filter(recent).values("id").query)) == months_of(now - timedelta(minutes=5), now)
    # A bet in the legacy partition placed an hour ago (as before the upgrade): a round opened before
    # it may have bets there, one opened after it has none.
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT round_id, account_id, client_id FROM {BETS} LIMIT 1")
        round_id, account_id, client_id = cursor.fetchone()
        cursor.execute(f"INSERT INTO {BETS} (id, round_id, account_id, client_id, bet_type, stake, multiplier, "
                       "idempotency_key, status, placed_at) VALUES (%s, %s, %s, %s, 'TIE', 1, 8, 'legacy-1', "
                       "'PENDING', %s)", [legacy_end - 1, round_id, account_id, client_id, now - timedelta(hours=1)])
    before = bet_ids_placed(since=now - timedelta(hours=2), until=now)
    after = bet_ids_placed(since=now - timedelta(minutes=30), until=now)
    assert f"{BETS}_legacy" in scanned(str(Bet.objects.filter(before).values("id").query))
    assert scanned(str(Bet.objects.filter(after).values("id").query)) == months_of(now - timedelta(minutes=30), now)


def generic_plan(statement: str, params) -> str:
    """EXPLAIN of ``statement`` (with its %s placeholders) as a prepared statement's generic plan:
    its parameters unseen, as PostgreSQL plans a statement psycopg has prepared (decision 0005)."""
    numbers = iter(range(1, len(params) + 1))
    numbered = re.sub(r"%(%|s)", lambda match: "%" if match.group(1) == "%" else f"${next(numbers)}", statement)
    values = psql.SQL(", ").join(map(psql.Literal, params)).as_string(connection.connection)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            cursor.execute(f"PREPARE generic_probe AS {numbered}")
            # A utility statement: its values written, not bound.
            cursor.execute(f"EXPLAIN EXECUTE generic_probe({values})" if params else "EXPLAIN EXECUTE generic_probe")
            plan = "\n".join(line for (line,) in cursor.fetchall())
            transaction.set_rollback(True)  # the savepoint's rollback ends the mode with it
    finally:  # the probe is the session's, whatever became of the savepoint
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE name = 'generic_probe'")
            if cursor.fetchone()[0]:
                cursor.execute("DEALLOCATE generic_probe")
    return plan


def assert_planned_with_the_months_bounds(plan: str, months: set) -> None:
    """Pruned when planned (no partition left to the executor's pruning), its id bounds constants."""
    every = [f"{BETS}_legacy", *partitions.month_partitions(BETS).values()]
    assert "Subplans Removed" not in plan and {name for name in every if name in plan} == months, plan
    assert not re.search(r"\bid [<>]=? \$", plan), plan


def test_a_generic_plan_sees_the_months_bounds(game, integration, funded_account):
    # Bound as parameters, the months' bounds were unseen by a generic plan: it took a month's ids
    # for a few rows, read all of them and sorted them for a page of 100 bets (418 ms against 0.14 ms
    # beside 2 million bets of the month), and ANDed them with a settlement batch's bets (70-87 ms a
    # batch against 8 ms). Written into the statement, every plan prunes the other partitions when
    # planned and sees how many bets a month's ids hold.
    funded_account("a", "100.00")
    now = timezone.now()
    since = now - timedelta(minutes=5)
    page = Bet.objects.filter(bet_ids_placed(since=since, until=now), status="PENDING").order_by("-id")[:100]
    statement, params = page.query.sql_with_params()
    assert f'"{BETS}"."id" >= {partitions.month_start_id(since - CLOCK_LEEWAY)}' in statement, statement
    plan = generic_plan(statement, params)
    # (Whether it then sorts depends on the statistics of a table this small, so it is not asserted.)
    assert_planned_with_the_months_bounds(plan, months_of(since, now))

    # The settlement batch's own read of its bets, as it runs.
    with dealt_rounds_left_to_the_sweep():
        round_ = open_round_with_bets(game, integration, [("a", "PLAYER", "1.00")])
    reads = []

    def noting_the_read(execute, sql, params, many, context):
        if sql.startswith("SELECT") and '"games_bet"."paytable"' in sql and '"games_bet"."round_id" IN' in sql:
            reads.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(noting_the_read):
        assert services.settlement_run(worker="w").bets == 1
    assert len(reads) == 1
    assert_planned_with_the_months_bounds(generic_plan(*reads[0]), months_of(round_.opened_at, timezone.now()))
