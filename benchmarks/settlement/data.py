"""The data set of the settlement benchmark, generated in SQL (not timed) and the same on every build:
rounds already DEALT, funded accounts, PENDING bets and their STAKE ledger entries."""

import json
import time
from contextlib import suppress
from dataclasses import dataclass
from decimal import Decimal

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.db import DatabaseError, connection

from benchmarks.expected import expected_payout_sql
from games.engine import Dealer, server_seed_hash
from games.models import Bet, GameInstance, Round, SeedPair
from settlement.models import SettlementBatch
from wallet.models import Account, LedgerEntry

T_GAME = GameInstance._meta.db_table
T_SEED = SeedPair._meta.db_table
T_ROUND = Round._meta.db_table
T_BET = Bet._meta.db_table
T_ACCOUNT = Account._meta.db_table
T_LEDGER = LedgerEntry._meta.db_table
T_BATCH = SettlementBatch._meta.db_table

# The multipliers in force: the operator changed the game halfway through the rounds, so the bets
# of the second half carry other multipliers than those of the first (the bet's own one settles it).
MULTIPLIERS_BEFORE = {"PLAYER": "2.0000", "BANKER": "1.9500", "TIE": "9.0000"}
MULTIPLIERS_AFTER = {"PLAYER": "2.0000", "BANKER": "1.9000", "TIE": "8.5000"}
DECKS = 8


@dataclass(frozen=True)
class Shape:
    """What every build of a run shares; only the number of bets varies."""

    bets_per_round: int
    accounts: int
    seed: int
    client_id: int  # the user placing the bets


@dataclass(frozen=True)
class DataSet:
    """What was generated; equal fingerprints mean the same data set."""

    bets: int
    rounds: int
    accounts: int
    staked: Decimal
    to_pay: Decimal
    paid_bets: int


def bench_tables() -> list:
    """Every table of the apps holding games, money and their history: what each build wipes."""
    return [model._meta.db_table for label in ("audit", "wallet", "games", "settlement")
            for model in apps.get_app_config(label).get_models()
            if model._meta.managed and not model._meta.proxy]


def bench_client() -> int:
    user, _ = get_user_model().objects.get_or_create(username="bench-client", defaults={"is_active": True})
    return user.pk


def checkpoint(cursor) -> None:
    """Start every measurement from the same state: fresh statistics, no dirty pages pending."""
    for table in bench_tables():
        cursor.execute(f"VACUUM ANALYZE {table}")
    with suppress(DatabaseError):  # not a superuser: measure without the checkpoint
        cursor.execute("CHECKPOINT")


def same(first: DataSet, second: DataSet) -> None:
    if first != second:
        raise CommandError(f"The data sets differ between measurements: {first} != {second}")


def build(bets: int, shape: Shape, say) -> DataSet:
    """Wipe the bench tables and generate the data set; balances equal their ledgers."""
    started = time.perf_counter()
    rounds = -(-bets // shape.bets_per_round)
    server_seed = server_seed_hash(f"bench-server-seed-{shape.seed}")
    client_seed = f"bench-client-{shape.seed}"
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(bench_tables())} RESTART IDENTITY CASCADE")
        game_id = _insert_game(cursor)
        cursor.execute(
            f"""INSERT INTO {T_SEED} (game_id, server_seed, server_seed_hash, client_seed, next_nonce,
                    created_at, revealed_at)
                VALUES (%s, %s, %s, %s, %s, now(), NULL) RETURNING id""",
            [game_id, server_seed, server_seed_hash(server_seed), client_seed, rounds],
        )
        seed_pair_id = cursor.fetchone()[0]
        _insert_dealt_rounds(cursor, game_id, seed_pair_id, Dealer(server_seed, client_seed), rounds)
        _insert_accounts_and_bets(cursor, bets, rounds, shape)
        _insert_ledger(cursor)
        cursor.execute(
            f"""SELECT count(*), COALESCE(sum(b.stake), 0), COALESCE(sum({expected_payout_sql()}), 0),
                       count(*) FILTER (WHERE {expected_payout_sql()} > 0)
                FROM {T_BET} AS b JOIN {T_ROUND} AS r ON r.id = b.round_id"""
        )
        count, staked, to_pay, paid_bets = cursor.fetchone()
        checkpoint(cursor)
    say(f"  (generated {bets} bets in {time.perf_counter() - started:.1f} s, not timed)")
    return DataSet(count, rounds, shape.accounts, staked, to_pay, paid_bets)


def _insert_game(cursor) -> int:
    cursor.execute(
        f"""INSERT INTO {T_GAME} (slug, name, status, decks, player_multiplier, banker_multiplier,
                tie_multiplier, min_bet, max_bet, currency, created_at, updated_at)
            VALUES ('bench-table', 'Bench table', 'active', %s, %s, %s, %s, 1.00, 1000.00, 'USD', now(), now())
            RETURNING id""",
        [DECKS, MULTIPLIERS_AFTER["PLAYER"], MULTIPLIERS_AFTER["BANKER"], MULTIPLIERS_AFTER["TIE"]],
    )
    return cursor.fetchone()[0]


def _insert_dealt_rounds(cursor, game_id: int, seed_pair_id: int, dealer: Dealer, rounds: int) -> None:
    """Rounds 0…rounds-1 of the seed pair, dealt by the engine, in one statement."""
    columns = {name: [] for name in ("nonce", "cards", "player_cards", "banker_cards", "player_score",
                                     "banker_score", "natural", "outcome")}
    for nonce in range(rounds):
        result = dealer.play(nonce, DECKS)
        dealt = result.as_dict()
        columns["nonce"].append(nonce)
        columns["cards"].append(json.dumps(dealt["cards"]))
        columns["player_cards"].append(json.dumps(dealt["player"]["cards"]))
        columns["banker_cards"].append(json.dumps(dealt["banker"]["cards"]))
        columns["player_score"].append(result.player_score)
        columns["banker_score"].append(result.banker_score)
        columns["natural"].append(result.natural)
        columns["outcome"].append(str(result.outcome))
    cursor.execute(
        f"""INSERT INTO {T_ROUND} (game_id, seed_pair_id, nonce, decks, status, cards, player_cards,
                banker_cards, player_score, banker_score, "natural", outcome, opened_at, dealt_at,
                settled_at, voided_at, void_reason, settlement_failures)
            SELECT %s, %s, v.nonce, %s, 'DEALT', v.cards::jsonb, v.player_cards::jsonb,
                   v.banker_cards::jsonb, v.player_score, v.banker_score, v."natural", v.outcome,
                   now(), now(), NULL, NULL, '', 0
            FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::smallint[],
                        %s::smallint[], %s::boolean[], %s::text[])
                AS v(nonce, cards, player_cards, banker_cards, player_score, banker_score,
                     "natural", outcome)
            ORDER BY v.nonce""",
        [game_id, seed_pair_id, DECKS, *columns.values()],
    )


def _multiplier_case(values: dict) -> str:
    return "CASE bet_type " + " ".join(f"WHEN '{bet_type}' THEN {value}" for bet_type, value in values.items()) + " END"


def _insert_accounts_and_bets(cursor, bets: int, rounds: int, shape: Shape) -> None:
    cursor.execute(f"SELECT min(id) FROM {T_ROUND}")
    first_round = cursor.fetchone()[0]
    cursor.execute(
        f"""INSERT INTO {T_ACCOUNT} (external_id, currency, balance, created_at)
            SELECT 'bench-' || lpad(i::text, 7, '0'), 'USD', 0, now()
            FROM generate_series(1, %s) AS i ORDER BY i""",
        [shape.accounts],
    )
    cursor.execute(f"SELECT min(id) FROM {T_ACCOUNT}")
    first_account = cursor.fetchone()[0]
    # Random types (45 % Player, 45 % Banker, 10 % Tie), stakes from 1.00 to 100.00 and accounts,
    # the same on every build: the generator is seeded in this session.
    cursor.execute("SELECT setseed(%s)", [(shape.seed % 1999) / 1999])
    cursor.execute(
        f"""INSERT INTO {T_BET} (round_id, account_id, client_id, bet_type, stake, multiplier,
                idempotency_key, status, payout, placed_at, settled_at)
            SELECT round_id, account_id, %s, bet_type, stake,
                   CASE WHEN round_id - %s < %s THEN {_multiplier_case(MULTIPLIERS_BEFORE)}
                        ELSE {_multiplier_case(MULTIPLIERS_AFTER)} END,
                   'bench-' || g, 'PENDING', NULL, now(), NULL
            FROM (
                SELECT g,
                       %s + (g - 1) / %s AS round_id,
                       %s + floor(random() * %s)::bigint AS account_id,
                       CASE WHEN u < 0.45 THEN 'PLAYER' WHEN u < 0.90 THEN 'BANKER' ELSE 'TIE' END
                           AS bet_type,
                       round((1 + random() * 99)::numeric, 2) AS stake
                FROM (SELECT g, random() AS u FROM generate_series(1, %s) AS g) AS s
            ) AS x
            ORDER BY g""",
        [shape.client_id, first_round, rounds // 2, first_round, shape.bets_per_round, first_account,
         shape.accounts, bets],
    )


def _insert_ledger(cursor) -> None:
    """A deposit per account covering its stakes and more, then a STAKE entry per bet."""
    cursor.execute(
        f"""INSERT INTO {T_LEDGER} (account_id, bet_id, kind, amount, balance_after, reason, created_at)
            SELECT a.id, NULL, 'ADJUSTMENT', d.amount, d.amount, 'bench deposit', now()
            FROM {T_ACCOUNT} AS a
            JOIN LATERAL (
                SELECT COALESCE(sum(b.stake), 0) + 1000 + mod(a.id, 9000) AS amount
                FROM {T_BET} AS b WHERE b.account_id = a.id
            ) AS d ON true
            ORDER BY a.id"""
    )
    cursor.execute(
        f"""INSERT INTO {T_LEDGER} (account_id, bet_id, kind, amount, balance_after, reason, created_at)
            SELECT b.account_id, b.id, 'STAKE', -b.stake,
                   d.amount - sum(b.stake) OVER (PARTITION BY b.account_id ORDER BY b.id), '', now()
            FROM {T_BET} AS b
            JOIN {T_LEDGER} AS d ON d.account_id = b.account_id AND d.kind = 'ADJUSTMENT'
            ORDER BY b.id"""
    )
    cursor.execute(
        f"""UPDATE {T_ACCOUNT} AS a SET balance = l.total
            FROM (SELECT account_id, sum(amount) AS total FROM {T_LEDGER} GROUP BY account_id) AS l
            WHERE a.id = l.account_id"""
    )
