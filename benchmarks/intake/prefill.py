"""--prefill: history for intake to stand on. After single bets / floor on the empty tables and before
the other phases, the bench tables get ``bets`` settled bets of the past (ten a round, on rounds of a
game of their own, spread over the last year) with their idempotency keys, ledger entries and the
entries' effects, so that intake is measured against indexes of tens of millions of rows rather than
an empty table.

Each bet is a push (its stake returned), so its two ledger entries cancel out, each written at its
account's balance: the ledger still equals every balance, entry by entry. No audit events are
written for them: the sequencer would take them on during the measurement and measure itself.
Written set-based, a million bets a statement (each commits), with the bets' and ledger's foreign
keys dropped meanwhile and checked once at the end: their deferred checks, a lookup per row through
the partitioned bets at each commit, took nine tenths of the time (33 of 36 s for 100,000 bets)."""

import time
from datetime import timedelta
from decimal import Decimal

from django.db import connection
from django.utils import timezone

from benchmarks.database import foreign_keys_checked_after
from games import services
from games.models import Bet, BetKey, Round, SeedPair
from wallet.models import Account, LedgerEffect, LedgerEntry

BETS_PER_ROUND = 10
CHUNK_BETS = 1_000_000
HISTORY = timedelta(days=365)
STAKE = Decimal("1.00")

_ROUNDS = f"""
    INSERT INTO {Round._meta.db_table} (game_id, seed_pair_id, nonce, decks, status, cards, player_cards, banker_cards,
                                        player_score, banker_score, "natural", outcome, opened_at, dealt_at,
                                        settled_at, voided_at, void_reason, settlement_failures)
    SELECT %(game)s, %(pair)s, n, 8, 'SETTLED', '[]', '[]', '[]', 5, 5, false, 'TIE', t, t + interval '15 s',
           t + interval '16 s', NULL, '', 0
    FROM generate_series(0, %(rounds)s::bigint - 1) AS n,
         LATERAL (SELECT %(start)s::timestamptz + n * %(step)s::interval AS t) AS at
"""

_BETS_AND_LEDGER = f"""
    WITH bet AS (
        INSERT INTO {Bet._meta.db_table} (round_id, account_id, client_id, bet_type, stake, multiplier,
                                          idempotency_key, status, payout, placed_at, settled_at)
        SELECT r.id, %(first_account)s::bigint + n %% %(accounts)s, %(client)s,
               (ARRAY['PLAYER', 'BANKER', 'TIE'])[1 + n %% 3], %(stake)s, 2, 'prefill-' || n, 'PUSH', %(stake)s,
               r.opened_at + interval '5 s', r.settled_at
        FROM generate_series(%(first)s::bigint, %(last)s::bigint) AS n
             JOIN {Round._meta.db_table} r ON r.id = %(first_round)s::bigint + n / {BETS_PER_ROUND}
        RETURNING id, client_id, idempotency_key, account_id, placed_at, settled_at
    ),
    key AS (
        INSERT INTO {BetKey._meta.db_table} (client_id, idempotency_key, bet_id)
        SELECT client_id, idempotency_key, id FROM bet
    ),
    effect AS (
        INSERT INTO {LedgerEffect._meta.db_table} (bet_id, kind)
        SELECT bet.id, e.kind FROM bet CROSS JOIN (VALUES ('STAKE'), ('PAYOUT')) AS e(kind)
    )
    INSERT INTO {LedgerEntry._meta.db_table} (account_id, bet_id, kind, amount, balance_after, reason, created_at)
    SELECT bet.account_id, bet.id, e.kind, e.sign * %(stake)s, a.balance + (e.sign - 1) * %(stake)s / 2, '',
           CASE e.kind WHEN 'STAKE' THEN bet.placed_at ELSE bet.settled_at END
    FROM bet JOIN {Account._meta.db_table} AS a ON a.id = bet.account_id
         CROSS JOIN (VALUES ('STAKE', -1), ('PAYOUT', 1)) AS e(kind, sign)
    ORDER BY bet.id, e.sign
"""


def prefill(bets: int, *, client_id: int, accounts: tuple[int, int], say) -> None:
    """``bets`` past bets over the accounts with ids ``accounts`` (first, last), at their balances."""
    started = time.perf_counter()
    game = services.game_create(actor="system:bench-intake", slug="bench-history", name="Bench history",
                                min_bet=STAKE, max_bet=Decimal("1000.00"))
    pair = SeedPair.objects.filter(game=game).values_list("pk", flat=True).get()
    rounds = -(-bets // BETS_PER_ROUND)
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(_ROUNDS, {"game": game.pk, "pair": pair, "rounds": rounds, "start": now - HISTORY,
                                 "step": HISTORY / max(rounds, 1)})
    first_round = Round.objects.filter(game=game).order_by("pk").values_list("pk", flat=True).first()
    with foreign_keys_checked_after(Bet._meta.db_table), foreign_keys_checked_after(LedgerEntry._meta.db_table):
        for first in range(0, bets, CHUNK_BETS):
            with connection.cursor() as cursor:
                cursor.execute(_BETS_AND_LEDGER, {
                    "first": first, "last": min(first + CHUNK_BETS, bets) - 1, "first_round": first_round,
                    "first_account": accounts[0], "accounts": accounts[1] - accounts[0] + 1,
                    "client": client_id, "stake": STAKE})
            say(f"  prefill: {min(first + CHUNK_BETS, bets):,} of {bets:,} bets "
                f"({time.perf_counter() - started:.0f} s)")
        say(f"  prefill: checking the bets' and ledger's foreign keys ({time.perf_counter() - started:.0f} s)")
    with connection.cursor() as cursor:  # as autovacuum would have: the visibility map and statistics
        for model in (Round, Bet, BetKey, LedgerEntry, LedgerEffect):
            cursor.execute(f"VACUUM (ANALYZE) {model._meta.db_table}")
    say(f"prefilled {bets:,} bets and {2 * bets:,} ledger entries in {time.perf_counter() - started:.0f} s")
