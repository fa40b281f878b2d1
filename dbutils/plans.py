"""Plans that see the values they depend on: bounds written into a statement, custom plans for a
block of statements whose arrays and ranges vary by orders of magnitude, and reads never prepared."""

from contextlib import ExitStack, contextmanager

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import F, Lookup, Q


class _LiteralBound(Lookup):
    """``column <operator> N`` with the integer N written into the statement, not bound: every plan
    of it sees N, a prepared statement's generic plan too (docs/decisions/0005-prepared-statements.md),
    and prunes partitions when planned. For bounds that seldom change (a month's first id), so that
    the statements they make stay few. An expression in a Q (column_at_least, column_below), never
    registered on a field."""

    operator = ""

    def __init__(self, lhs, bound: int):
        if type(bound) is not int:  # nothing but digits reaches the SQL (no bool, no subclass)
            raise TypeError(f"A literal bound is an int, not {bound!r}.")
        self.bound = bound
        super().__init__(lhs, bound)

    def as_sql(self, compiler, connection):
        lhs, params = self.process_lhs(compiler, connection)
        return f"{lhs} {self.operator} {self.bound}", params


class _AtLeast(_LiteralBound):
    operator = ">="


class _Below(_LiteralBound):
    operator = "<"


def column_at_least(column: str, bound: int) -> Q:
    """``column >= bound``, the bound written into the statement; a column of the queryset's own
    model (an expression filter promotes no join)."""
    return Q(_AtLeast(F(_own_column(column)), bound))


def column_below(column: str, bound: int) -> Q:
    """``column < bound``, as column_at_least."""
    return Q(_Below(F(_own_column(column)), bound))


def _own_column(column: str) -> str:
    if "__" in column:
        raise ValueError(f"{column!r}: a literal bound is on a column of the queryset's own model.")
    return column


@contextmanager
def custom_plans(using: str = DEFAULT_DB_ALIAS):
    """Plan the block's statements for their own values, then back to the mode before it.

    Once a statement is prepared (its fifth run on a connection: docs/decisions/0005-prepared-
    statements.md) its generic plan guesses what it cannot see: ten elements for an array, any
    range of ids. The mode ends with the block, not with the transaction: the foreign keys' checks
    deferred to the commit run one cached query a row, and planned anew for each row they cost
    0.17 ms against the partitioned bets, 0.01 ms with their cached plan (0.8 s against 0.05 s at
    the commit of a 10,000-bet settlement batch). A block left by an error leaves the mode to the
    rollback of its transaction or savepoint. Inside a transaction only: outside one the setting
    would last for its own statement alone."""
    if not connections[using].in_atomic_block:
        raise RuntimeError("custom_plans() needs a transaction: outside one its setting lasts one statement")
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT current_setting('plan_cache_mode'), "
                       "set_config('plan_cache_mode', 'force_custom_plan', true)")
        before = cursor.fetchone()[0]
    yield
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT set_config('plan_cache_mode', %s, true)", [before])


@contextmanager
def unprepared():
    """No statement the block runs, on any database, is prepared or run as prepared: each is sent
    with its values and planned for them (a custom plan). The switch is psycopg's, on the client
    (``prepare_threshold`` None for the statement's run): it adds no statement, needs no transaction
    and holds behind a pooler. For reads whose filters are skewed (an action, a ledger kind) or whose
    bounds a generic plan cannot see: forced to generic plans, the admin's list of sign-in events
    took 1,281 ms beside 2 million bets (docs/decisions/0005-prepared-statements.md). Statements
    prepared before the block stay prepared for the statements after it. Not for a block that runs
    DISCARD ALL or DEALLOCATE ALL: psycopg, not preparing, would not see the server forget them."""
    with ExitStack() as stack:
        for alias in connections:
            stack.enter_context(connections[alias].execute_wrapper(_run_unprepared))
        yield


def _run_unprepared(execute, sql, params, many, context):
    driver = getattr(context["cursor"].cursor, "connection", None)  # the statement's own connection
    if not hasattr(driver, "prepare_threshold"):
        return execute(sql, params, many, context)
    before = driver.prepare_threshold
    driver.prepare_threshold = None
    try:
        return execute(sql, params, many, context)
    finally:
        driver.prepare_threshold = before
