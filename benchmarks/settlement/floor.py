"""(a) The floor: one set-based SQL statement doing the minimum writes equivalent to the worker's.

It pays a side bet on its round's event read from the benchmark's events table (data.T_EVENTS,
computed by the engine when the data was built), where the worker computes it from the round's
cards: the floor does the writes, not the dealing."""

import time

from django.db import connection, transaction

from .data import PAYOUT_SQL, STATUS_SQL, T_ACCOUNT, T_BET, T_EFFECT, T_EVENTS, T_LEDGER, T_ROUND
from .measurement import Measurement, backend_pid, cpu_seconds

FLOOR_SQL = f"""
WITH settled_rounds AS (
    UPDATE {T_ROUND} SET status = 'SETTLED', settled_at = now()
    WHERE status = 'DEALT'
    RETURNING id, outcome
), settled_bets AS (
    UPDATE {T_BET} AS b
    SET status = {STATUS_SQL}, payout = {PAYOUT_SQL}, settled_at = now()
    FROM settled_rounds AS r JOIN {T_EVENTS} AS e ON e.round_id = r.id
    WHERE b.round_id = r.id AND b.status = 'PENDING'
    RETURNING b.id, b.account_id, b.payout
), paid AS (
    SELECT id AS bet_id, account_id, payout,
           sum(payout) OVER (PARTITION BY account_id ORDER BY id) AS running
    FROM settled_bets WHERE payout > 0
), credited AS (
    UPDATE {T_ACCOUNT} AS a SET balance = a.balance + t.total
    FROM (SELECT account_id, sum(payout) AS total FROM paid GROUP BY account_id) AS t
    WHERE a.id = t.account_id
    RETURNING a.id, a.balance - t.total AS balance_before
), ledger AS (
    INSERT INTO {T_LEDGER} (account_id, bet_id, kind, amount, balance_after, reason, created_at)
    SELECT p.account_id, p.bet_id, 'PAYOUT', p.payout, c.balance_before + p.running, '', now()
    FROM paid AS p JOIN credited AS c ON c.id = p.account_id
    ORDER BY p.bet_id
    RETURNING 1
), effects AS (
    INSERT INTO {T_EFFECT} (bet_id, kind) SELECT bet_id, 'PAYOUT' FROM paid ORDER BY bet_id
)
SELECT (SELECT count(*) FROM settled_bets), (SELECT count(*) FROM ledger)
"""


def measure_floor(bets: int) -> Measurement:
    """Settle every DEALT round at once; the CPU is its backend's (the statement runs there)."""
    with connection.cursor() as cursor:
        backend = backend_pid(cursor)
        cpu = cpu_seconds(backend)
        started = time.perf_counter()
        with transaction.atomic():
            cursor.execute(FLOOR_SQL)
            cursor.fetchone()
        seconds = time.perf_counter() - started
        cpu = cpu_seconds(backend) - cpu
    return Measurement(bets=bets, seconds=seconds, cpu_seconds=cpu)
