"""The check of a settlement, from the database alone: what makes a figure count."""

from django.db import connection

from .data import OF_THE_DATA_SET, PAYOUT_SQL, STATUS_SQL, T_ACCOUNT, T_BET, T_EVENTS, T_LEDGER, T_ROUND, DataSet

# (what a non-zero count means, the query counting it). The bets' checks count the data set's bets
# only (a history's rounds have no events); every account and ledger entry is checked, a history's too.
CHECKS = [
    ("bets of settled rounds still pending", f"""
        SELECT count(*) FROM {T_BET} AS b JOIN {T_ROUND} AS r ON r.id = b.round_id
        WHERE r.status = 'SETTLED' AND b.status = 'PENDING' AND b.{OF_THE_DATA_SET}"""),
    ("bets of dealt rounds settled", f"""
        SELECT count(*) FROM {T_BET} AS b JOIN {T_ROUND} AS r ON r.id = b.round_id
        WHERE r.status = 'DEALT' AND b.status <> 'PENDING' AND b.{OF_THE_DATA_SET}"""),
    # Every bet, main or side: a round without its events expects NULL, which no settled bet is.
    ("settled bets with a wrong status or payout", f"""
        SELECT count(*) FROM {T_BET} AS b JOIN {T_ROUND} AS r ON r.id = b.round_id
        LEFT JOIN {T_EVENTS} AS e ON e.round_id = b.round_id
        WHERE b.status <> 'PENDING' AND b.{OF_THE_DATA_SET}
          AND (b.status IS DISTINCT FROM {STATUS_SQL} OR b.payout IS DISTINCT FROM {PAYOUT_SQL})"""),
    ("bets without exactly one PAYOUT entry of their payout (or with one they should not have)", f"""
        SELECT count(*) FROM {T_BET} AS b
        LEFT JOIN (SELECT bet_id, count(*) AS n, sum(amount) AS total FROM {T_LEDGER}
                   WHERE kind = 'PAYOUT' AND bet_id IN (SELECT id FROM {T_BET} WHERE {OF_THE_DATA_SET})
                   GROUP BY bet_id) AS l ON l.bet_id = b.id
        WHERE b.{OF_THE_DATA_SET}
          AND ((COALESCE(b.payout, 0) > 0 AND (l.n IS DISTINCT FROM 1 OR l.total <> b.payout))
               OR (COALESCE(b.payout, 0) = 0 AND l.n IS NOT NULL))"""),
    ("bets without exactly one STAKE entry", f"""
        SELECT count(*) FROM {T_BET} AS b
        LEFT JOIN (SELECT bet_id, count(*) AS n FROM {T_LEDGER}
                   WHERE kind = 'STAKE' AND bet_id IN (SELECT id FROM {T_BET} WHERE {OF_THE_DATA_SET})
                   GROUP BY bet_id) AS l ON l.bet_id = b.id
        WHERE b.{OF_THE_DATA_SET} AND l.n IS DISTINCT FROM 1"""),
    ("accounts whose balance differs from the sum of their ledger", f"""
        SELECT count(*) FROM {T_ACCOUNT} AS a
        LEFT JOIN (SELECT account_id, sum(amount) AS total FROM {T_LEDGER} GROUP BY account_id) AS l
            ON l.account_id = a.id
        WHERE a.balance <> COALESCE(l.total, 0)"""),
    ("ledger entries whose balance_after is not the running sum", f"""
        SELECT count(*) FROM (
            SELECT balance_after, sum(amount) OVER (PARTITION BY account_id ORDER BY id) AS running
            FROM {T_LEDGER}) AS l
        WHERE balance_after <> running"""),
]


def verify(*, expect_all: bool, data: DataSet) -> list:
    """The problems found: every bet of a settled round settled once with the right payout, one
    PAYOUT entry per paid bet, balances equal to their ledgers, the ledger's running balance; with
    ``expect_all``, every round settled and every amount paid."""
    problems = []
    with connection.cursor() as cursor:
        for label, query in CHECKS:
            cursor.execute(query)
            count = cursor.fetchone()[0]
            if count:
                problems.append(f"{count} {label}")
        if expect_all:
            cursor.execute(
                f"""SELECT (SELECT count(*) FROM {T_ROUND} WHERE status = 'DEALT'),
                           (SELECT count(*) FROM {T_BET} WHERE status <> 'PENDING' AND {OF_THE_DATA_SET}),
                           (SELECT COALESCE(sum(amount), 0) FROM {T_LEDGER}
                            WHERE kind = 'PAYOUT' AND {OF_THE_DATA_SET})"""
            )
            dealt, settled, paid = cursor.fetchone()
            if dealt:
                problems.append(f"{dealt} rounds still DEALT")
            if settled != data.bets:
                problems.append(f"{settled} bets settled of {data.bets}")
            if paid != data.to_pay:
                problems.append(f"paid {paid}, expected {data.to_pay}")
    return problems
