"""Accounts, bets, the ledger, settlement batches and audit events of the pages benchmark, each set
in one ``INSERT … SELECT`` over the rounds already written (rounds.py)."""

import json
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from benchmarks.database import foreign_keys_checked_after
from benchmarks.expected import expected_payout_sql, expected_status_sql
from dbutils.partitions import month_id_sql

from .games import CHANGES

BATCH_ROUNDS = 200
BATCH_WORKERS = 4


def insert_accounts_and_bets(*, accounts: int, bets: int, rounds: int, client_id: int, start: datetime) -> None:
    """Accounts (a few play much more than most) and bets spread evenly over the rounds, settled
    as their round is: by the expected settlement, refunded, or still pending."""
    per_round = max(1, bets // rounds)
    status = expected_status_sql(bet_type="x.bet_type", outcome="r.outcome")
    payout = expected_payout_sql(bet_type="x.bet_type", outcome="r.outcome", stake="x.stake",
                                 multiplier="m.multiplier")
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO settlement_account (id, external_id, currency, balance, created_at)
               SELECT n, 'bench-player-' || lpad(n::text, 6, '0'), 'USD', 0, %s
               FROM generate_series(1, %s) AS g(n)""",
            [start, accounts])
        cursor.execute("SELECT setval(pg_get_serial_sequence('settlement_account', 'id'), %s)", [accounts])
    # A "%" of the SQL is written "%%": the query has parameters.
    placed_at = "r.opened_at + make_interval(secs => (x.n %% %(per_round)s) * 0.4 + 0.1)"
    with foreign_keys_checked_after("games_bet"), connection.cursor() as cursor:
        cursor.execute(
            f"""INSERT INTO games_bet (id, round_id, account_id, client_id, bet_type, stake, multiplier,
                                      idempotency_key, status, payout, placed_at, settled_at)
               SELECT {month_id_sql(placed_at, "games_bet_id_seq")}, x.round_id, x.account_id, %(client)s, x.bet_type,
                      x.stake, m.multiplier, 'bench-' || x.n,
                      CASE r.status WHEN 'SETTLED' THEN {status} WHEN 'VOID' THEN 'REFUNDED' ELSE 'PENDING' END,
                      CASE r.status WHEN 'SETTLED' THEN {payout} WHEN 'VOID' THEN x.stake END,
                      {placed_at},
                      CASE r.status WHEN 'SETTLED' THEN r.settled_at WHEN 'VOID' THEN r.voided_at END
               FROM (
                   SELECT s.n, s.round_id, s.account_id, s.stake,
                          CASE WHEN s.u < 0.46 THEN 'BANKER' WHEN s.u < 0.9 THEN 'PLAYER' ELSE 'TIE' END AS bet_type
                   FROM (
                       SELECT g.n, (g.n - 1) / %(per_round)s + 1 AS round_id,
                              1 + floor(power(random(), 1.6) * %(accounts)s)::bigint AS account_id,
                              (ARRAY[1, 2, 5, 10, 10, 20, 25, 50, 100, 250])[1 + floor(random() * 10)::int]::numeric
                                  AS stake,
                              random() AS u
                       FROM generate_series(1, %(bets)s) AS g(n)
                   ) s
               ) x
               JOIN games_round r ON r.id = x.round_id
               JOIN bench_round_config c ON c.round_id = x.round_id
               CROSS JOIN LATERAL (
                   SELECT CASE x.bet_type WHEN 'PLAYER' THEN c.player WHEN 'BANKER' THEN c.banker ELSE c.tie END
                       AS multiplier
               ) m
               ORDER BY x.n""",
            {"client": client_id, "per_round": per_round, "accounts": accounts, "bets": min(bets, per_round * rounds)})


def insert_ledger() -> None:
    """A deposit per account, then every bet's stake, payout or refund in time order, with the
    running balance; the balances are their ledgers' sums."""
    with foreign_keys_checked_after("settlement_ledgerentry"), connection.cursor() as cursor:
        cursor.execute(
            f"""INSERT INTO settlement_ledgerentry (id, account_id, bet_id, kind, amount, balance_after, reason,
                                                   created_at)
               SELECT {month_id_sql("created_at", "settlement_ledgerentry_id_seq")}, account_id, bet_id, kind, amount,
                      SUM(amount) OVER (PARTITION BY account_id ORDER BY created_at, seq, bet_id
                                        ROWS UNBOUNDED PRECEDING),
                      reason, created_at
               FROM (
                   SELECT id AS account_id, NULL::bigint AS bet_id, 'ADJUSTMENT' AS kind,
                          1000000::numeric AS amount, 'bench deposit' AS reason, created_at, 0 AS seq
                   FROM settlement_account
                   UNION ALL
                   SELECT account_id, id, 'STAKE', -stake, '', placed_at, 1 FROM games_bet
                   UNION ALL
                   SELECT account_id, id, 'PAYOUT', payout, '', settled_at, 2 FROM games_bet
                   WHERE status IN ('WON', 'PUSH') AND payout > 0
                   UNION ALL
                   SELECT account_id, id, 'REFUND', payout, '', settled_at, 2 FROM games_bet WHERE status = 'REFUNDED'
               ) e
               ORDER BY created_at, seq, bet_id""")
        cursor.execute(
            """UPDATE settlement_account a SET balance = s.total
               FROM (SELECT account_id, SUM(amount) AS total FROM settlement_ledgerentry GROUP BY account_id) s
               WHERE a.id = s.account_id""")


def insert_batches_and_audit(games: list, start: datetime) -> None:
    """Settlement batches of the settled rounds, and an audit event per bet, per dealt round and per
    configuration change, after the events already there; the Merkle log takes them in (only the
    legacy partition's events carry a hash chain)."""
    with connection.cursor() as cursor:
        worker = f"'bench:' || ((r.id - 1) / {BATCH_ROUNDS} % {BATCH_WORKERS})"
        cursor.execute(
            f"""INSERT INTO settlement_settlementbatch (worker, started_at, finished_at, rounds, bets, total_staked,
                                                       total_paid, totals, round_ids, outcome, error)
                SELECT {worker}, MIN(r.settled_at), MAX(r.settled_at) + interval '40 ms',
                       COUNT(DISTINCT r.id), COUNT(b.id), COALESCE(SUM(b.stake), 0), COALESCE(SUM(b.payout), 0),
                       jsonb_build_object('USD', jsonb_build_object(  -- every game here plays in USD
                           'bets', COUNT(b.id), 'staked', round(COALESCE(SUM(b.stake), 0), 2)::text,
                           'paid', round(COALESCE(SUM(b.payout), 0), 2)::text)),
                       jsonb_agg(DISTINCT r.id), 'ok', ''
                FROM games_round r LEFT JOIN games_bet b ON b.round_id = r.id
                WHERE r.status = 'SETTLED'
                GROUP BY (r.id - 1) / {BATCH_ROUNDS}, {worker}
                ORDER BY 2""")
        changes, params = [], []
        for game_index, share, fields, reason in CHANGES:
            if game_index >= len(games):
                continue
            at = start + (timezone.now() - timedelta(minutes=10) - start) * share
            changes.append("(%s::timestamptz, %s, %s::jsonb, %s::jsonb, %s)")
            params += [at, str(games[game_index].pk),
                       json.dumps({name: before for name, (before, _after) in fields.items()}),
                       json.dumps({name: after for name, (_before, after) in fields.items()}), reason]
        changes_sql = (" UNION ALL SELECT at, 'bench-admin', 'game.configured', 'gameinstance', object_id, "
                       "before_value, after_value, reason, 0 FROM (VALUES " + ", ".join(changes) +
                       ") AS c(at, object_id, before_value, after_value, reason)") if changes else ""
        cursor.execute(
            f"""INSERT INTO games_auditevent (id, created_at, actor_user_id, actor, action, object_type, object_id,
                                             before, after, reason, request_id, source_ip)
                SELECT {month_id_sql("created_at", "games_auditevent_id_seq")}, created_at, NULL, actor, action,
                       object_type, object_id, before_value, after_value, reason,
                       '', NULL
                FROM (
                    SELECT e.*, row_number() OVER (ORDER BY created_at, k) AS rn
                    FROM (
                        SELECT placed_at AS created_at, 'bench-game-server' AS actor, 'bet.accepted' AS action,
                               'bet' AS object_type, id::text AS object_id, NULL::jsonb AS before_value,
                               jsonb_build_object('round', round_id, 'bet_type', bet_type, 'stake', stake::text,
                                                  'multiplier', multiplier::text) AS after_value,
                               '' AS reason, id AS k
                        FROM games_bet
                        UNION ALL
                        SELECT dealt_at, 'bench-game-server', 'round.dealt', 'round', id::text, NULL,
                               jsonb_build_object('outcome', outcome, 'cards', cards), '', id
                        FROM games_round WHERE dealt_at IS NOT NULL
                        {changes_sql}
                    ) e
                ) x
                ORDER BY rn""",
            params)
