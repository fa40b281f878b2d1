"""dbutils.plans: custom_plans, the block's statements planned for their own values, then the mode
before it, inside the same transaction; the bounds written into a statement as literals; and
unprepared, a block whose statements psycopg neither prepares nor runs as prepared."""

import pytest
from django.db import DatabaseError, connection, transaction

from dbutils.plans import column_at_least, column_below, custom_plans, unprepared
from tests.conftest import prepared_runs

pytestmark = pytest.mark.django_db(transaction=True)


def plan_mode() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        return cursor.fetchone()[0]


def test_the_mode_ends_with_the_block_not_with_the_transaction():
    with transaction.atomic():
        with custom_plans():
            assert plan_mode() == "force_custom_plan"
        assert plan_mode() == "auto"  # what the commit's deferred checks run with
    assert plan_mode() == "auto"


def test_the_mode_before_the_block_comes_back_whatever_it_was():
    with connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = force_generic_plan")
    try:
        with transaction.atomic():
            with custom_plans():
                assert plan_mode() == "force_custom_plan"
            assert plan_mode() == "force_generic_plan"
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET plan_cache_mode")


def test_nested_blocks_each_give_back_the_mode_they_found():
    with transaction.atomic():
        with custom_plans():
            with custom_plans():
                assert plan_mode() == "force_custom_plan"
            assert plan_mode() == "force_custom_plan"
        assert plan_mode() == "auto"


def test_the_mode_is_the_transactions_alone_even_when_the_block_is_left_by_a_caught_error():
    # No savepoint between: only SET LOCAL (set_config's is_local) ends with the transaction.
    with transaction.atomic():
        try:
            with custom_plans():
                raise LookupError
        except LookupError:
            assert plan_mode() == "force_custom_plan"
    assert plan_mode() == "auto"


def test_outside_a_transaction_it_refuses_rather_than_plan_nothing():
    with pytest.raises(RuntimeError, match="needs a transaction"), custom_plans():
        pass


@pytest.mark.parametrize("bound", ["1; DROP TABLE games_bet", 1.5, True, None])
def test_a_literal_bound_is_an_int_or_refused(bound):
    with pytest.raises(TypeError, match="literal bound is an int"):
        column_at_least("id", bound)


def test_literal_bounds_are_written_into_the_statement_not_bound():
    from games.models import Bet

    statement, params = Bet.objects.filter(column_at_least("id", 10) & column_below("id", 20)).values("id") \
        .query.sql_with_params()
    assert '"games_bet"."id" >= 10 AND "games_bet"."id" < 20' in statement and params == (), statement
    assert list(Bet.objects.filter(column_at_least("id", 10) & column_below("id", 20))) == []


def test_literal_bounds_keep_their_alias_in_a_subquery_and_negated():
    from games.models import Bet, Round

    inner = Bet.objects.filter(column_at_least("id", 7)).values("round_id")
    statement, params = Round.objects.filter(pk__in=inner).exclude(column_below("id", 3)).query.sql_with_params()
    assert 'U0."id" >= 7' in statement and 'NOT ("games_round"."id" < 3)' in statement, statement
    with pytest.raises(ValueError, match="own model"):
        column_below("round__id", 3)


def run(statement: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, ["WON"])


PROBE = "SELECT count(*) AS unprepared_probe FROM games_bet WHERE status = %s"


@pytest.mark.usefixtures("prepared_at_first_run")
def test_unprepared_statements_are_neither_prepared_nor_run_as_prepared():
    run(PROBE)
    assert prepared_runs("unprepared_probe") == (1, 1)
    with unprepared():
        run(PROBE)  # prepared before the block: sent with its values instead
        run(PROBE.replace("probe", "probe_two"))  # new: not prepared
        assert connection.connection.prepare_threshold == 0  # switched for each statement's run alone
    assert prepared_runs("unprepared_probe") == (1, 1)
    run(PROBE)
    assert prepared_runs("unprepared_probe") == (1, 2)
    run(PROBE.replace("probe", "probe_two"))
    assert prepared_runs("unprepared_probe_two") == (1, 1)


@pytest.mark.usefixtures("prepared_at_first_run")
def test_a_statement_that_fails_in_the_block_leaves_the_connection_preparing():
    with pytest.raises(DatabaseError), transaction.atomic(), unprepared():
        run("SELECT count(*) AS unprepared_failure FROM no_such_table WHERE status = %s")
    assert connection.connection.prepare_threshold == 0
    run(PROBE.replace("probe", "probe_after_failure"))
    assert prepared_runs("unprepared_probe_after_failure") == (1, 1)
