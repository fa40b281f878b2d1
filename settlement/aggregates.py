"""Daily aggregates of settled play: kept exactly once by the settlement path, rebuilt and checked
from the raw rows by ``manage.py rebuild_aggregates``. The dashboard reads only these.

Three tables (settlement.models):

- ``DailyBetTotals`` (day, game, bet type: any registered one, side bets too): bets, won / lost /
  pushed, handle and paid out in whole minor units of the game's currency (cents of USD, yen, fils
  of KWD, satoshis of BTC at 8 places: ``minor_units_per_unit``; the columns keep their first name,
  ``_cents``), and the theoretical return: Σ stake × the exact return to player of the bet's own
  terms (a main bet's multiplier, a side bet's paytable) on the round's shoe, in
  10⁻⁸ of the currency whatever its places (a millionth of a cent), each bet's share rounded to it
  (so the sum is the same however the bets are grouped: per batch, per day, in one go). A game's
  rows are of its one currency (frozen once it took a bet): a report adds rows of one currency only.
- ``DailyRoundTotals`` (day, game, decks): rounds, PLAYER / BANKER / TIE, naturals, and the
  settlement lag (dealt → settled) as a sum and a maximum in milliseconds.
- ``ActiveAccountMonth`` (month, game, account): the days of the month on which the account had a
  bet settled on the game, as a bit mask, so distinct accounts over any period read one row per
  account, game and month (the period's days as a mask), never the bets.
- ``ReturningAccounts`` (currency, game or every game of the currency, day, previous active day):
  how many accounts came back on a day after which previous one, so distinct accounts over any
  period are a sum over at most days² / 2 rows, whatever the number of accounts. A batch finds the
  active days around each one it adds in ``ActiveAccountMonth`` (before adding its own), under the
  row locks of its accounts that it holds already: two batches never record one account at once.

A day is the UTC date of the round's settlement. Every update is a handful of set-based statements
(INSERT … SELECT … ON CONFLICT DO UPDATE with increments) run by
``record_settled_rounds`` inside the settlement batch's own transaction, so a batch's aggregates
commit or roll back with its payouts: exactly once. Rows are upserted in key order, so two batches
never wait for each other's aggregate rows in opposite orders. A HELD bet (its writes failed while
its round settled) counts nowhere until an operator settles it: ``record_resolved_bets`` adds it
then, to its round's day, in that settlement's transaction.

A bet's theoretical return is computed from its own terms and its round's decks: the configuration
in force when the bet was accepted. A main bet (no paytable) returns linearly in its multiplier m:
RTP = P(win) · m + P(push), with P from the exact odds of the shoe, and the two coefficients of
every (decks, bet type) travel with the statement. A side bet settles on the paytable it carries
(games.engine.bet_paytable): RTP = Σ P(event) · multiplier over its events, a push returning the
stake. The exact counts of deals of every (decks, side bet type) travel with the statement too
(``bet_odds``: ways of each paying event as JSON, of the pushes, out of all deals), so the database
weighs each bet's paytable by them in exact numeric and rounds the bet's share with an integer
division: exactly the Fraction ``expected_return_ucents`` gives. Every registered bet type has its
row, so no bet drops out of the join.
"""

import json
from dataclasses import dataclass, field
from decimal import Context, Decimal
from fractions import Fraction
from functools import cache, lru_cache

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

from core.currencies import ISO_4217, configured, minor_places
from games.choices import BetStatus, Outcome, RoundStatus
from games.engine import (
    MAIN_BET_TYPES,
    MAX_DECKS,
    MIN_DECKS,
    SIDE_BET_TYPES,
    Multipliers,
    bet_odds,
    bet_paytable,
    bet_rtp,
    exact_odds,
    return_to_player,
)
from games.models import Bet, GameInstance, Round
from settlement.models import ActiveAccountMonth, DailyBetTotals, DailyRoundTotals, ReturningAccounts

CENTS_PER_UNIT = 100  # the minor units of a two-place currency, most currencies'
UCENTS_PER_UNIT = 100_000_000  # the theoretical return is stored in 10^-8 of the currency (µcents)
SETTLED_BET_STATUSES = (BetStatus.WON, BetStatus.LOST, BetStatus.PUSH)
_COEFFICIENT_DIGITS = Context(prec=40)


# --- Exact return to player ---------------------------------------------------------------------

@cache
def rtp_coefficients(decks: int, bet_type: str) -> tuple[Fraction, Fraction]:
    """(a, b) with RTP(m) = a · m + b exactly, for a bet of this type on a shoe of ``decks``."""
    odds = exact_odds(decks)
    at_zero = return_to_player(odds, bet_type, Multipliers(Decimal(0), Decimal(0), Decimal(0)))
    at_one = return_to_player(odds, bet_type, Multipliers(Decimal(1), Decimal(1), Decimal(1)))
    return at_one - at_zero, at_zero


@lru_cache(maxsize=4096)
def rtp(decks: int, bet_type: str, multiplier: Decimal) -> Fraction:
    """The exact return to player of one bet type at one multiplier on one shoe (cached)."""
    a, b = rtp_coefficients(decks, bet_type)
    return a * Fraction(multiplier) + b


@lru_cache(maxsize=4096)
def _paytable_rtp(decks: int, bet_type: str, paytable_items: tuple) -> Fraction:
    return bet_rtp(bet_odds(decks)[bet_type], bet_paytable(bet_type, Decimal(0), dict(paytable_items)))


def bet_rtp_of(decks: int, bet_type: str, multiplier: Decimal, paytable=None) -> Fraction:
    """The exact return to player of a bet on its own terms: a main bet's multiplier, a side bet's
    paytable (as Bet.paytable holds it), on a shoe of ``decks``."""
    if paytable is None:
        return rtp(decks, bet_type, Decimal(multiplier))
    return _paytable_rtp(decks, bet_type, tuple(sorted(paytable.items())))


def expected_return_ucents(stake: Decimal, decks: int, bet_type: str, multiplier: Decimal, paytable=None) -> int:
    """One bet's theoretical return in millionths of a cent, rounded half up: what the SQL computes."""
    value = Fraction(stake) * bet_rtp_of(decks, bet_type, multiplier, paytable) * UCENTS_PER_UNIT
    return int(value + Fraction(1, 2)) if value >= 0 else -int(-value + Fraction(1, 2))


# --- SQL ---------------------------------------------------------------------------------------------

def _q(name: str) -> str:
    return connection.ops.quote_name(name)  # the same quoting on every alias


def _table(model) -> str:
    return _q(model._meta.db_table)


def _column(model, name: str) -> str:
    return _q(model._meta.get_field(name).column)


def _day(expression: str) -> str:
    """The UTC date of a timestamp column."""
    return f"(({expression}) AT TIME ZONE 'UTC')::date"


def minor_units_per_unit(currency: str) -> int:
    """How many minor units make one unit of the currency: USD 100, JPY 1, KWD 1000, BTC 10^8."""
    return 10 ** minor_places(currency)


def _minor_units(expression: str) -> str:
    """An amount of the bet's game's currency (b.per_unit, from _game_units_ctes) in its minor units:
    exact for an amount at its currency's places; one stored before that rule (a yen stake of 100.50)
    is rounded half away from zero."""
    return f"CAST(ROUND(({expression}) * b.per_unit) AS BIGINT)"


def _game_units_ctes() -> str:
    """Two CTEs: ``currency_units`` of the currencies without two places (ISO 4217's and the
    configured; a currency not listed has two), and from it ``game_units(game_id, per_unit)``, the
    minor units per unit of every game's currency, one row a game (MATERIALIZED: each bet is matched
    with a row computed once, not with every currency)."""
    units = {code: places for code, places in {**ISO_4217, **configured()}.items() if places != 2}
    rows = ", ".join(f"('{code}', CAST({10 ** places} AS BIGINT))" for code, places in sorted(units.items()))
    return (f"currency_units(currency, per_unit) AS (VALUES {rows}), "
            f"game_units(game_id, per_unit) AS MATERIALIZED (SELECT g.{_column(GameInstance, 'id')}, "
            f"COALESCE(cu.per_unit, {CENTS_PER_UNIT}) FROM {_table(GameInstance)} g "
            f"LEFT JOIN currency_units cu ON cu.currency = g.{_column(GameInstance, 'currency')})")


def _lag_ms(dealt: str, settled: str) -> str:
    return f"CAST(ROUND(EXTRACT(EPOCH FROM ({settled} - {dealt})) * 1000) AS BIGINT)"


def _month(expression: str) -> str:
    """The first day of the UTC month of a timestamp column."""
    return f"date_trunc('month', ({expression}) AT TIME ZONE 'UTC')::date"


def _day_bit(expression: str, *, of_date: bool = False) -> str:
    """1 << (day of the month − 1), the day's bit in ActiveAccountMonth.days, of a time stamp (its
    UTC day) or, ``of_date``, of a date."""
    day = expression if of_date else f"({expression}) AT TIME ZONE 'UTC'"
    return f"(CAST(1 AS BIGINT) << (EXTRACT(DAY FROM {day})::int - 1))"


def _coefficient_value(value: Fraction) -> Decimal:
    return _COEFFICIENT_DIGITS.divide(Decimal(value.numerator), Decimal(value.denominator))


EVERY_SHOE = tuple(range(MIN_DECKS, MAX_DECKS + 1))  # the shoe sizes a game may deal from


@cache
def _side_bet_deals(decks: int) -> tuple:
    """(side bet type, deals, deals that push, {paying-or-losing event: deals} as JSON) of every side
    bet type on a shoe of ``decks``: the exact counts a side bet's paytable is weighed by (computed
    once per process and shoe, about 0.4 s)."""
    rows = []
    odds = bet_odds(decks)
    for bet_type in SIDE_BET_TYPES:
        counts = odds[bet_type]
        pushes = counts.kind.push_events
        ways = {event: n for event, n in counts.counts.items() if event not in pushes}
        rows.append((bet_type, counts.total, sum(counts.counts[event] for event in pushes), json.dumps(ways)))
    return tuple(rows)


def _odds_cte(shoes) -> tuple[str, list]:
    """``shoe_odds(decks, bet_type, win, push, deals, push_ways, ways) AS MATERIALIZED (VALUES …)``: one
    row per shoe of ``shoes`` (numbers of decks) and registered bet type. A main bet type's row has its
    coefficients (win, push); a side bet type's, its exact counts of deals (the others NULL).
    MATERIALIZED: the casts are evaluated once, not each time a bet is matched with the rows."""
    rows, params = [], []
    row = f"(%s, %s, {'CAST(%s AS NUMERIC), ' * 4}CAST(%s AS JSONB))"
    for decks in shoes:
        for bet_type in MAIN_BET_TYPES:
            a, b = rtp_coefficients(decks, bet_type)
            rows.append(row)
            params += [decks, bet_type, _coefficient_value(a), _coefficient_value(b), None, None, None]
        for bet_type, deals, push_ways, ways in _side_bet_deals(decks):
            rows.append(row)
            params += [decks, bet_type, None, None, deals, push_ways, ways]
    return f"shoe_odds(decks, bet_type, win, push, deals, push_ways, ways) AS MATERIALIZED " \
           f"(VALUES {', '.join(rows)})", params


def _expected_return_sql(stake: str, multiplier: str, paytable: str) -> str:
    """One bet's theoretical return in µcents (on the shoe_odds row c), as ``expected_return_ucents``.

    A main bet: its coefficients, rounded half up by ROUND. A side bet: stake × (the pushes' ways
    + Σ ways × multiplier over its paytable's events) × 10^8 / deals, exact in numeric (c.ways has no
    push: a push counts at 1 whether its paytable lists it or not, as settlement_of pays it), rounded
    half up as ⌊(2x + deals) / (2 · deals)⌋ with div, an exact integer quotient."""
    weighed = (f"COALESCE((SELECT SUM(CAST(c.ways ->> e.key AS NUMERIC) * CAST(e.value AS NUMERIC)) "
               f"FROM jsonb_each_text({paytable}) e), 0)")
    return (f"CAST(CASE WHEN {paytable} IS NULL "
            f"THEN ROUND({stake} * (c.win * {multiplier} + c.push) * {UCENTS_PER_UNIT}) "
            f"ELSE div(2 * {stake} * (c.push_ways + {weighed}) * {UCENTS_PER_UNIT} + c.deals, 2 * c.deals) "
            f"END AS BIGINT)")


def _ids_in(column: str, ids) -> tuple[str, list]:
    return f"{column} = ANY(%s)", [sorted({int(value) for value in ids})]


def _status_check(condition: str, round_ids) -> str:
    """``condition`` on a status column, as a filter only when the rows are reached by ``round_ids``.

    Statistics of statuses are stale the moment a batch settles (a day's bets go from PENDING to WON
    or LOST within minutes of an ANALYZE): trusting them, the planner reads the rounds and bets
    through their status indexes, every settled one for every batch (measured: a batch of 200 rounds
    took over a minute on 200,000 bets). Wrapped in IS TRUE no index serves the condition, so a
    batch's rows are reached by its round ids alone, through the primary key and the bets' round index.
    """
    return condition if round_ids is None else f"({condition}) IS TRUE"


def _round_filter(round_ids) -> tuple[str, list]:
    """SQL (on the round alias r) for settled rounds, all of them or those of ``round_ids``."""
    status = _status_check(f"r.{_column(Round, 'status')} = %s", round_ids)
    if round_ids is None:
        return status, [RoundStatus.SETTLED]
    ids, params = _ids_in(f"r.{_column(Round, 'id')}", round_ids)
    return f"{ids} AND {status}", [*params, RoundStatus.SETTLED]


def _bet_filter(round_ids, bet_ids) -> tuple[str, list]:
    """SQL (on the aliases r and b) for the settled rounds, narrowed to ``bet_ids`` when given."""
    where, params = _round_filter(round_ids)
    if bet_ids is None:
        return where, params
    ids, id_params = _ids_in(f"b.{_column(Bet, 'id')}", bet_ids)
    return f"{where} AND {ids}", [*params, *id_params]


def _settled_bets(round_ids, bet_ids) -> tuple[str, str, list]:
    """(FROM, WHERE, its params) of the settled bets (WON, LOST, PUSH) of the settled rounds, or of
    ``round_ids`` or ``bet_ids`` alone, each joined to its round: b and r; more joins go between."""
    where, params = _bet_filter(round_ids, bet_ids)
    statuses = ", ".join(["%s"] * len(SETTLED_BET_STATUSES))
    status = _status_check(f"b.{_column(Bet, 'status')} IN ({statuses})", round_ids)
    return (f"FROM {_table(Bet)} b JOIN {_table(Round)} r ON r.{_column(Round, 'id')} = b.{_column(Bet, 'round')}",
            f"{where} AND {status}", [*params, *SETTLED_BET_STATUSES])


def _bet_totals_select(round_ids, bet_ids=None, shoes=EVERY_SHOE) -> tuple[str, list, str, list]:
    """(WITH …, SELECT …) computing DailyBetTotals rows from the raw bets, in key order; every round
    of them deals from one of ``shoes`` (numbers of decks)."""
    cte, cte_params = _odds_cte(shoes)
    settled_bets, where, where_params = _settled_bets(round_ids, bet_ids)
    b = lambda name: f"b.{_column(Bet, name)}"  # noqa: E731
    r = lambda name: f"r.{_column(Round, name)}"  # noqa: E731
    count_of = "SUM(CASE WHEN {} = %s THEN 1 ELSE 0 END)".format(b("status"))
    # The bets are read first, then matched with their odds (OFFSET 0: else the planner matches each
    # round with every bet type's odds, then reads the round's bets once for each). Each amount is
    # rounded on its own, so the totals are the same however the bets are grouped (batch or rebuild).
    columns = ", ".join(b(name) for name in ("bet_type", "status", "stake", "payout", "multiplier", "paytable"))
    select = f"""
        SELECT b.day, b.game, {b('bet_type')}, COUNT(*), {count_of}, {count_of}, {count_of},
               SUM({_minor_units(b('stake'))}), SUM({_minor_units(b('payout'))}),
               SUM({_expected_return_sql(b('stake'), b('multiplier'), b('paytable'))})
        FROM (SELECT {_day(r('settled_at'))} AS day, {r('game')} AS game, {r('decks')} AS decks, u.per_unit, {columns}
              {settled_bets}
              JOIN game_units u ON u.game_id = {r('game')}
              WHERE {where}
              OFFSET 0) b
        JOIN shoe_odds c ON c.decks = b.decks AND c.bet_type = {b('bet_type')}
        GROUP BY 1, 2, 3"""
    params = [BetStatus.WON, BetStatus.LOST, BetStatus.PUSH, *where_params]
    return f"WITH {_game_units_ctes()}, {cte}", cte_params, select, params


def _round_totals_select(round_ids) -> tuple[str, list]:
    where, where_params = _round_filter(round_ids)
    r = lambda name: f"r.{_column(Round, name)}"  # noqa: E731
    lag = _lag_ms(r("dealt_at"), r("settled_at"))
    count_of = "SUM(CASE WHEN {} = %s THEN 1 ELSE 0 END)".format(r("outcome"))
    select = f"""
        SELECT {_day(r('settled_at'))}, {r('game')}, {r('decks')}, COUNT(*),
               {count_of}, {count_of}, {count_of},
               SUM(CASE WHEN {r('natural')} THEN 1 ELSE 0 END), SUM({lag}), MAX({lag})
        FROM {_table(Round)} r
        WHERE {where}
        GROUP BY 1, 2, 3"""
    return select, [Outcome.PLAYER, Outcome.BANKER, Outcome.TIE, *where_params]


def _active_accounts_select(round_ids, bet_ids=None) -> tuple[str, list]:
    settled_bets, where, params = _settled_bets(round_ids, bet_ids)
    settled_at = f"r.{_column(Round, 'settled_at')}"
    # Each day is a distinct power of two, so the sum of the distinct bits is their OR.
    select = f"""
        SELECT {_month(settled_at)}, r.{_column(Round, 'game')}, b.{_column(Bet, 'account')},
               SUM(DISTINCT {_day_bit(settled_at)})
        {settled_bets}
        WHERE {where}
        GROUP BY 1, 2, 3"""
    return select, params


def _highest_bit(mask: str) -> str:
    """The index of the highest bit set in a month's mask (bit i: the month's day i + 1): the length
    of the mask as bits without its leading zeros, less one."""
    return f"(length(ltrim(CAST({mask} AS bit(31))::text, '0')) - 1)"


def _scope_months(alias: str, row: str) -> str:
    """The stored months of the scope and account of the batch row ``row``: of its one game, or of the
    games of its currency (``row``.games)."""
    column = lambda name: f"{alias}.{_column(ActiveAccountMonth, name)}"  # noqa: E731
    return (f"FROM {_table(ActiveAccountMonth)} {alias} "
            f"WHERE {column('account')} = {row}.account AND {column('game')} = ANY({row}.games)")


def _nearest_day(row: str, *, later: bool) -> str:
    """The stored active day of the scope nearest ``row``.day in an earlier (``later``: a later) month
    than its own; NULL when there is none. The month through the index by account and month."""
    month, days = _column(ActiveAccountMonth, "month"), _column(ActiveAccountMonth, "days")
    nearest = f"(SELECT {'min' if later else 'max'}(q.{month}) {_scope_months('q', row)} " \
              f"AND q.{month} {'>' if later else '<'} {row}.month)"
    mask = f"(bit_or(p.{days}) & -bit_or(p.{days}))" if later else f"bit_or(p.{days})"
    return f"(SELECT max(p.{month}) + {_highest_bit(mask)} {_scope_months('p', row)} AND p.{month} = {nearest})"


def _returning_accounts_select(round_ids, bet_ids=None, *, from_scratch=False) -> tuple[str, list, str, list]:
    """(WITH …, SELECT …) of the ReturningAccounts increments these rounds' (or bets') active days make.

    Each scope (a game; every game of its currency) and account gets the days it was not active on
    yet, ``fresh``, each with the stored active days around it (none ``from_scratch``: a rebuild),
    found in the day's month's mask or else in the nearest month with one. Ordered together, every
    fresh day and every stored day right after one is linked to the day before it: +1 for each such
    link, −1 for the link each of those stored days had before.
    """
    settled_bets, where, where_params = _settled_bets(round_ids, bet_ids)
    b = lambda name: f"b.{_column(Bet, name)}"  # noqa: E731
    r = lambda name: f"r.{_column(Round, name)}"  # noqa: E731
    g = lambda name: f"g.{_column(GameInstance, name)}"  # noqa: E731
    bit = _day_bit("c.day", of_date=True)
    below, above = f"(c.month_days & ({bit} - 1))", f"(c.month_days & -({bit} << 1))"
    if from_scratch:
        fresh = "SELECT c.*, CAST(NULL AS date) AS before, CAST(NULL AS date) AS after FROM batch c"
    else:
        fresh = f"""SELECT c.*,
                CASE WHEN {below} <> 0 THEN c.month + {_highest_bit(below)} ELSE {_nearest_day('c', later=False)} END
                    AS before,
                CASE WHEN {above} <> 0 THEN c.month + {_highest_bit(f'({above} & -{above})')}
                     ELSE {_nearest_day('c', later=True)} END AS after
            FROM (SELECT a.*, COALESCE((SELECT bit_or(m.{_column(ActiveAccountMonth, 'days')}) {_scope_months('m', 'a')}
                                        AND m.{_column(ActiveAccountMonth, 'month')} = a.month), 0) AS month_days
                  FROM batch a) c
            WHERE c.month_days & {bit} = 0"""
    with_sql = f"""WITH currency_games AS (
            SELECT {g('currency')} AS currency, array_agg({g('id')}) AS games FROM {_table(GameInstance)} g GROUP BY 1),
        active AS (  -- each game, account and day once (far fewer than the bets), then in its two scopes
            SELECT DISTINCT {g('currency')} AS currency, scope.game, played.account, played.day
            FROM (SELECT DISTINCT {r('game')} AS game, {b('account')} AS account, {_day(r('settled_at'))} AS day
                  {settled_bets}
                  WHERE {where}) played
            JOIN {_table(GameInstance)} g ON g.{_column(GameInstance, 'id')} = played.game
            CROSS JOIN LATERAL (VALUES (played.game), (CAST(NULL AS BIGINT))) scope(game)),
        batch AS (
            SELECT active.*, CAST(date_trunc('month', active.day) AS date) AS month,
                   CASE WHEN active.game IS NULL THEN cg.games ELSE ARRAY[active.game] END AS games
            FROM active JOIN currency_games cg ON cg.currency = active.currency),
        fresh AS ({fresh}),
        around AS (
            SELECT currency, game, account, day, bool_or(is_fresh) AS is_fresh, bool_or(is_after) AS is_after
            FROM (SELECT currency, game, account, day, TRUE AS is_fresh, FALSE AS is_after FROM fresh
                  UNION ALL SELECT currency, game, account, before, FALSE, FALSE FROM fresh WHERE before IS NOT NULL
                  UNION ALL SELECT currency, game, account, after, FALSE, TRUE FROM fresh WHERE after IS NOT NULL) w
            GROUP BY 1, 2, 3, 4),
        linked AS (
            SELECT around.*, LAG(day) OVER (PARTITION BY currency, game, account ORDER BY day) AS previous_day
            FROM around),
        links AS (
            SELECT currency, game, day, previous_day, 1 AS accounts FROM linked WHERE is_fresh OR is_after
            UNION ALL
            SELECT currency, game, after, before, -1
            FROM (SELECT DISTINCT currency, game, account, after, before FROM fresh WHERE after IS NOT NULL) broken)"""
    select = ("SELECT currency, game, day, previous_day, SUM(accounts) FROM links "
              "GROUP BY 1, 2, 3, 4 HAVING SUM(accounts) <> 0")
    return with_sql, where_params, select, []


@dataclass(frozen=True)
class AggregateTable:
    model: type
    key: tuple
    counters: tuple = ()
    maxima: tuple = ()
    bit_sets: tuple = ()
    zero_counts_nothing: bool = False  # a row whose counters are all 0 is as good as none

    def stored_sql(self) -> str:
        where = " AND ".join(f"{_column(self.model, c)} <> 0" for c in self.counters)
        return f"SELECT {self.column_sql()} FROM {_table(self.model)}" + (
            f" WHERE {where}" if self.zero_counts_nothing else "")

    @property
    def columns(self) -> tuple:
        return self.key + self.counters + self.maxima + self.bit_sets

    @property
    def label(self) -> str:
        return str(self.model._meta.verbose_name_plural)

    def column_sql(self) -> str:
        return ", ".join(_column(self.model, name) for name in self.columns)


BET_TOTALS = AggregateTable(
    DailyBetTotals, key=("day", "game", "bet_type"),
    counters=("bets", "won", "lost", "pushed", "handle_cents", "paid_out_cents", "expected_return_ucents"),
)
ROUND_TOTALS = AggregateTable(
    DailyRoundTotals, key=("day", "game", "decks"),
    counters=("rounds", "player_wins", "banker_wins", "ties", "naturals", "lag_ms_sum"), maxima=("lag_ms_max",),
)
ACTIVE_ACCOUNTS = AggregateTable(ActiveAccountMonth, key=("month", "game", "account"), bit_sets=("days",))
RETURNING_ACCOUNTS = AggregateTable(ReturningAccounts, key=("currency", "game", "day", "previous_day"),
                                    counters=("accounts",), zero_counts_nothing=True)
# Returning accounts first: its reads take the longest and it takes its rows only as it ends, so no
# other batch waits on the game's rows meanwhile; and before the active months, which it reads as
# they were before the batch.
TABLES = (RETURNING_ACCOUNTS, BET_TOTALS, ROUND_TOTALS, ACTIVE_ACCOUNTS)


def _computed(table: AggregateTable, round_ids, bet_ids=None, *, from_scratch=False,
              shoes=EVERY_SHOE) -> tuple[str, list, str, list]:
    """(WITH prefix or "", its params, SELECT of the table's rows from the raw data, its params);
    with ``bet_ids``, of those bets only (the bet tables). ``from_scratch``: the whole table, from
    the raw data alone (the increments of the returning accounts otherwise read the stored months).
    ``shoes``: the numbers of decks the rounds dealt from, when known."""
    if table is BET_TOTALS:
        return _bet_totals_select(round_ids, bet_ids, shoes)
    if table is RETURNING_ACCOUNTS:
        return _returning_accounts_select(round_ids, bet_ids, from_scratch=from_scratch)
    if table is ROUND_TOTALS:
        select, params = _round_totals_select(round_ids)
    else:
        select, params = _active_accounts_select(round_ids, bet_ids)
    return "", [], select, params


def _upsert_sql(table: AggregateTable, round_ids, bet_ids=None, shoes=EVERY_SHOE) -> tuple[str, list]:
    with_sql, with_params, select, select_params = _computed(table, round_ids, bet_ids, shoes=shoes)
    params = with_params + select_params
    name = _table(table.model)
    key = ", ".join(_column(table.model, k) for k in table.key)
    order = ", ".join(str(i + 1) for i in range(len(table.key)))
    if table.counters or table.maxima or table.bit_sets:
        updates = [f"{_column(table.model, c)} = {name}.{_column(table.model, c)} + excluded.{_column(table.model, c)}"
                   for c in table.counters]
        updates += [f"{_column(table.model, c)} = "
                    f"GREATEST({name}.{_column(table.model, c)}, excluded.{_column(table.model, c)})"
                    for c in table.maxima]
        updates += [f"{_column(table.model, c)} = {name}.{_column(table.model, c)} | excluded.{_column(table.model, c)}"
                    for c in table.bit_sets]
        conflict = f"ON CONFLICT ({key}) DO UPDATE SET {', '.join(updates)}"
    else:
        conflict = f"ON CONFLICT ({key}) DO NOTHING"
    sql = f"{with_sql} INSERT INTO {name} ({table.column_sql()}) {select} ORDER BY {order} {conflict}"
    return sql, params


# --- The settlement path --------------------------------------------------------------------------

def record_settled_rounds(round_ids, *, shoes=None, using: str = DEFAULT_DB_ALIAS) -> None:
    """Add these just-settled rounds and their bets to the daily aggregates.

    Call it inside the settlement batch's transaction, after its bets and rounds are written
    (bets WON / LOST / PUSH, rounds SETTLED with settled_at): one statement a table, whatever the
    size of the batch. Rounds that are not SETTLED are ignored. ``shoes``: the numbers of decks the
    rounds dealt from, when the caller has read them (read here otherwise).
    """
    round_ids = list(round_ids)
    if not round_ids:
        return
    # Only the odds of the shoes these rounds dealt from: each shoe's take 0.4 s to count once.
    if shoes is None:
        shoes = sorted(set(Round.objects.using(using).filter(pk__in=round_ids).values_list("decks", flat=True)))
    if not shoes:  # no such round
        return
    with transaction.atomic(using=using, savepoint=False), connections[using].cursor() as cursor:
        for table in TABLES:
            cursor.execute(*_upsert_sql(table, round_ids, shoes=shoes))


def record_resolved_bets(bet_ids, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Add these bets, held when their round settled and settled since, to the daily aggregates.

    A held bet counts nowhere until an operator settles it; then it is added exactly as it would
    have been with its round (on its round's settlement day, the key of every aggregate), so the
    totals stay what a rebuild from the raw rows gives. Its round was counted already. Call it in
    the transaction that settles them; bets not WON / LOST / PUSH are ignored.
    """
    bet_ids = list(bet_ids)
    if not bet_ids:
        return
    with transaction.atomic(using=using, savepoint=False), connections[using].cursor() as cursor:
        for table in (RETURNING_ACCOUNTS, BET_TOTALS, ACTIVE_ACCOUNTS):
            cursor.execute(*_upsert_sql(table, None, bet_ids))


# --- Rebuild and check ----------------------------------------------------------------------------

@dataclass
class TableCheck:
    label: str
    key: tuple
    stored: int = 0
    computed: int = 0
    missing: int = 0      # computed from the raw data, not stored as such
    unexpected: int = 0   # stored, not what the raw data gives
    samples: list = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return not (self.missing or self.unexpected)


SAMPLES = 5


def check(samples: int = SAMPLES, *, using: str = DEFAULT_DB_ALIAS) -> list[TableCheck]:
    """Compare every aggregate table with what the raw rows give, set-based (EXCEPT both ways)."""
    results = []
    with connections[using].cursor() as cursor:
        for table in TABLES:
            with_sql, with_params, select, select_params = _computed(table, None, from_scratch=True)
            stored = table.stored_sql()
            result = TableCheck(table.label, table.key)
            cursor.execute(f"{with_sql} SELECT (SELECT COUNT(*) FROM ({stored}) stored), "
                           f"(SELECT COUNT(*) FROM ({select}) computed)", with_params + select_params)
            result.stored, result.computed = cursor.fetchone()
            cursor.execute(
                f"""{with_sql}
                SELECT 'missing', d.* FROM ({select} EXCEPT {stored}) d
                UNION ALL
                SELECT 'unexpected', e.* FROM ({stored} EXCEPT {select}) e""",
                with_params + select_params + select_params,
            )
            while rows := cursor.fetchmany(1000):
                for side, *values in rows:
                    setattr(result, side, getattr(result, side) + 1)
                    if len(result.samples) < samples:
                        result.samples.append((side, dict(zip(table.columns, values, strict=True))))
            results.append(result)
    return results


def rebuild(*, using: str = DEFAULT_DB_ALIAS) -> dict:
    """Replace every aggregate with what the raw rows give; {table label: rows}. One transaction.

    The aggregate tables are locked first, so a settlement batch that commits meanwhile adds its
    increments after the rebuild, to the rebuilt rows.
    """
    counts = {}
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        names = ", ".join(_table(table.model) for table in TABLES)
        cursor.execute(f"LOCK TABLE {names} IN SHARE ROW EXCLUSIVE MODE")
        for table in TABLES:
            cursor.execute(f"DELETE FROM {_table(table.model)}")
        for table in TABLES:
            with_sql, with_params, select, select_params = _computed(table, None, from_scratch=True)
            cursor.execute(f"{with_sql} INSERT INTO {_table(table.model)} ({table.column_sql()}) {select}",
                           with_params + select_params)
            cursor.execute(f"SELECT COUNT(*) FROM {_table(table.model)}")
            counts[table.label] = cursor.fetchone()[0]
    return counts
