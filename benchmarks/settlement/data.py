"""The data set of the settlement benchmark, generated in SQL (not timed) and the same on every build:
rounds already DEALT, funded accounts, PENDING bets (main and side bets) and their STAKE ledger
entries, and every round's events by bet type in a table of the benchmark's own (T_EVENTS)."""

import json
import time
from contextlib import suppress
from dataclasses import dataclass
from decimal import Decimal

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.db import DatabaseError, connection

from benchmarks.expected import expected_payout_sql, expected_status_sql
from games.engine import (
    SIDE_BET_TYPES,
    Dealer,
    default_paytables,
    headline_multiplier,
    make_paytable,
    paytable_as_json,
    round_events,
    server_seed_hash,
)
from games.models import Bet, GameInstance, Round, SeedPair
from settlement.models import SettlementBatch
from wallet.models import Account, LedgerEffect, LedgerEntry

T_GAME = GameInstance._meta.db_table
T_SEED = SeedPair._meta.db_table
T_ROUND = Round._meta.db_table
T_BET = Bet._meta.db_table
T_ACCOUNT = Account._meta.db_table
T_LEDGER = LedgerEntry._meta.db_table
T_EFFECT = LedgerEffect._meta.db_table  # each payout's one-effect row, as settlement writes it
T_BATCH = SettlementBatch._meta.db_table
# Every dealt round's events, {bet type: event} as the engine computes them when it deals the round
# (games.engine.round_events): what the floor and the check pay side bets on, set-based. The
# benchmark's own table, made anew by every build; no model, no migration.
T_EVENTS = "bench_settlement_round_events"
# The round's event for the bet's type, with T_EVENTS joined as e and the bet as b; and the bet's
# expected status and payout on it.
EVENT = "e.events ->> b.bet_type"
STATUS_SQL = expected_status_sql(event=EVENT)
PAYOUT_SQL = expected_payout_sql(event=EVENT)

# The data set's game (a history, --prefill, plays another).
GAME_SLUG = "bench-table"
# The data set's accounts are named with this prefix; a history (--prefill) has its own.
ACCOUNT_PREFIX = "bench-"
# The data set's accounts, and so its bets and ledger entries.
OF_THE_DATA_SET = f"account_id IN (SELECT id FROM {T_ACCOUNT} WHERE starts_with(external_id, '{ACCOUNT_PREFIX}'))"

# The multipliers in force: the operator changed the game halfway through the rounds, so the bets
# of the second half carry other multipliers than those of the first (the bet's own one settles it).
MULTIPLIERS_BEFORE = {"PLAYER": "2.0000", "BANKER": "1.9500", "TIE": "9.0000"}
MULTIPLIERS_AFTER = {"PLAYER": "2.0000", "BANKER": "1.9000", "TIE": "8.5000"}
# So too the side bets' paytables: the game's are the defaults; before, the pairs paid 11.5 (stake
# included) and a commission-free Banker win on six 1.25. A side bet settles on its own paytable.
SIDE_PAYTABLES_AFTER = {name: paytable for name, paytable in default_paytables().items() if name in SIDE_BET_TYPES}
SIDE_PAYTABLES_BEFORE = {**SIDE_PAYTABLES_AFTER, **{name: make_paytable(name, changed) for name, changed in {
    "PLAYER_PAIR": {"PAIR": "11.5"},
    "BANKER_PAIR": {"PAIR": "11.5"},
    "BANKER_COMMISSION_FREE": {**SIDE_PAYTABLES_AFTER["BANKER_COMMISSION_FREE"], "BANKER_WIN_ON_SIX": "1.25"},
}.items()}}
# The share of bets that are side bets unless told otherwise, spread evenly over every side bet type.
SIDE_BETS_SHARE = 0.2
DECKS = 8


@dataclass(frozen=True)
class Shape:
    """What every build of a run shares; only the number of bets varies."""

    bets_per_round: int
    accounts: int
    seed: int
    client_id: int  # the user placing the bets
    side_bets: float  # the share of bets that are side bets, 0 to 1


@dataclass(frozen=True)
class DataSet:
    """What was generated; equal fingerprints mean the same data set."""

    bets: int
    rounds: int
    accounts: int
    staked: Decimal
    to_pay: Decimal
    paid_bets: int
    side_bets: int


def bench_tables(labels=("audit", "wallet", "games", "settlement")) -> list:
    """Every table of the apps ``labels``; by default those holding games, money and their history:
    what each build wipes."""
    return [model._meta.db_table for label in labels
            for model in apps.get_app_config(label).get_models()
            if model._meta.managed and not model._meta.proxy]


def bench_client() -> int:
    user, _ = get_user_model().objects.get_or_create(username="bench-client", defaults={"is_active": True})
    return user.pk


def checkpoint(cursor) -> None:
    """Start every measurement from the same state: fresh statistics, no dirty pages pending."""
    for table in [*bench_tables(), T_EVENTS]:
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
        cursor.execute(f"DROP TABLE IF EXISTS {T_EVENTS}")
        cursor.execute(f"CREATE TABLE {T_EVENTS} (round_id bigint PRIMARY KEY, events jsonb NOT NULL)")
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
            f"""SELECT count(*), COALESCE(sum(b.stake), 0), COALESCE(sum({PAYOUT_SQL}), 0),
                       count(*) FILTER (WHERE {PAYOUT_SQL} > 0), count(*) FILTER (WHERE b.paytable IS NOT NULL)
                FROM {T_BET} AS b JOIN {T_ROUND} AS r ON r.id = b.round_id
                LEFT JOIN {T_EVENTS} AS e ON e.round_id = b.round_id"""
        )
        count, staked, to_pay, paid_bets, side_bets = cursor.fetchone()
        checkpoint(cursor)
    say(f"  (generated {bets} bets in {time.perf_counter() - started:.1f} s, not timed)")
    return DataSet(count, rounds, shape.accounts, staked, to_pay, paid_bets, side_bets)


def rows_digest() -> str:
    """A digest of the data set's rows, every column of each: its game, seed pair and rounds, its
    accounts, their bets, ledger entries and effects. Equal digests, the same rows. Each row hashed
    first: the rows of millions of bets, their paytables' text included, would pass the 1 GB a
    single text can hold."""
    of_the_bets = f"bet_id IN (SELECT id FROM {T_BET} WHERE {OF_THE_DATA_SET})"
    with connection.cursor() as cursor:
        cursor.execute(
            f"""WITH game AS (SELECT * FROM {T_GAME} WHERE slug = %s)
                SELECT md5(string_agg(md5(line), '' ORDER BY part, id, line)) FROM (
                    SELECT 0 AS part, g.id, g::text AS line FROM game AS g
                    UNION ALL SELECT 0, p.id, p::text FROM {T_SEED} AS p WHERE game_id = (SELECT id FROM game)
                    UNION ALL SELECT 1, r.id, r::text FROM {T_ROUND} AS r WHERE game_id = (SELECT id FROM game)
                    UNION ALL SELECT 2, a.id, a::text FROM {T_ACCOUNT} AS a WHERE starts_with(external_id, %s)
                    UNION ALL SELECT 3, b.id, b::text FROM {T_BET} AS b WHERE {OF_THE_DATA_SET}
                    UNION ALL SELECT 4, l.id, l::text FROM {T_LEDGER} AS l WHERE {OF_THE_DATA_SET}
                    UNION ALL SELECT 5, e.bet_id, e::text FROM {T_EFFECT} AS e WHERE {of_the_bets}
                ) AS rows""",
            [GAME_SLUG, ACCOUNT_PREFIX])
        return cursor.fetchone()[0]


def _insert_game(cursor) -> int:
    cursor.execute(
        f"""INSERT INTO {T_GAME} (slug, name, status, decks, player_multiplier, banker_multiplier,
                tie_multiplier, min_bet, max_bet, currency, side_bets, created_at, updated_at)
            VALUES (%s, 'Bench table', 'active', %s, %s, %s, %s, 1.00, 1000.00, 'USD', %s::jsonb,
                    now(), now())
            RETURNING id""",
        [GAME_SLUG, DECKS, MULTIPLIERS_AFTER["PLAYER"], MULTIPLIERS_AFTER["BANKER"], MULTIPLIERS_AFTER["TIE"],
         json.dumps({name: paytable_as_json(paytable) for name, paytable in SIDE_PAYTABLES_AFTER.items()})],
    )
    return cursor.fetchone()[0]


def _insert_dealt_rounds(cursor, game_id: int, seed_pair_id: int, dealer: Dealer, rounds: int) -> None:
    """Rounds 0…rounds-1 of the seed pair, dealt by the engine, in one statement; then their events."""
    columns = {name: [] for name in ("nonce", "cards", "player_cards", "banker_cards", "player_score",
                                     "banker_score", "natural", "outcome")}
    events = []
    for nonce in range(rounds):
        result = dealer.play(nonce, DECKS)
        events.append(json.dumps(dict(round_events(result))))
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
    cursor.execute(
        f"""INSERT INTO {T_EVENTS} (round_id, events)
            SELECT r.id, v.events::jsonb
            FROM unnest(%s::bigint[], %s::text[]) AS v(nonce, events)
            JOIN {T_ROUND} AS r ON r.seed_pair_id = %s AND r.nonce = v.nonce
            ORDER BY r.id""",
        [columns["nonce"], events, seed_pair_id],
    )


def _by_type(values: dict) -> str:
    """A CASE of the bet type: the SQL ``values[type]`` (NULL for a type it does not name)."""
    return "CASE bet_type " + " ".join(f"WHEN '{bet_type}' THEN {value}" for bet_type, value in values.items()) + " END"


def _terms(multipliers: dict, side_paytables: dict) -> tuple:
    """SQL of (multiplier, paytable) of a bet by its type: a main bet's multiplier and no paytable;
    a side bet's paytable (as intake stores it) and its highest multiplier."""
    multiplier = {**multipliers, **{name: headline_multiplier(paytable) for name, paytable in side_paytables.items()}}
    paytable = {name: f"'{json.dumps(paytable_as_json(table))}'::jsonb" for name, table in side_paytables.items()}
    return _by_type(multiplier), _by_type(paytable)


def _insert_accounts_and_bets(cursor, bets: int, rounds: int, shape: Shape) -> None:
    cursor.execute(f"SELECT min(id) FROM {T_ROUND}")
    first_round = cursor.fetchone()[0]
    cursor.execute(
        f"""INSERT INTO {T_ACCOUNT} (external_id, currency, balance, created_at)
            SELECT %s || lpad(i::text, 7, '0'), 'USD', 0, now()
            FROM generate_series(1, %s) AS i ORDER BY i""",
        [ACCOUNT_PREFIX, shape.accounts],
    )
    cursor.execute(f"SELECT min(id) FROM {T_ACCOUNT}")
    first_account = cursor.fetchone()[0]
    # Random types (a share of side bets, evenly over every side bet type; of the rest 45 % Player,
    # 45 % Banker, 10 % Tie), stakes from 1.00 to 100.00 and accounts, the same on every build: the
    # generator is seeded in this session.
    cursor.execute("SELECT setseed(%s)", [(shape.seed % 1999) / 1999])
    side, main = shape.side_bets, 1 - shape.side_bets
    multiplier_before, paytable_before = _terms(MULTIPLIERS_BEFORE, SIDE_PAYTABLES_BEFORE)
    multiplier_after, paytable_after = _terms(MULTIPLIERS_AFTER, SIDE_PAYTABLES_AFTER)
    side_types = "(ARRAY[" + ", ".join(f"'{name}'" for name in SIDE_BET_TYPES) + "])"
    cursor.execute(
        f"""INSERT INTO {T_BET} (round_id, account_id, client_id, bet_type, stake, multiplier, paytable,
                idempotency_key, status, payout, placed_at, settled_at)
            SELECT round_id, account_id, %(client)s, bet_type, stake,
                   CASE WHEN round_id - %(first_round)s < %(half)s THEN {multiplier_before}
                        ELSE {multiplier_after} END,
                   CASE WHEN round_id - %(first_round)s < %(half)s THEN {paytable_before}
                        ELSE {paytable_after} END,
                   'bench-' || g, 'PENDING', NULL, now(), NULL
            FROM (
                SELECT g,
                       %(first_round)s + (g - 1) / %(per_round)s AS round_id,
                       %(first_account)s + floor(random() * %(accounts)s)::bigint AS account_id,
                       CASE WHEN u < %(side)s
                                THEN {side_types}[least(%(sides)s, 1 + floor(u / %(side_or_1)s * %(sides)s)::int)]
                            WHEN u < %(player)s THEN 'PLAYER' WHEN u < %(banker)s THEN 'BANKER' ELSE 'TIE' END
                           AS bet_type,
                       round((1 + random() * 99)::numeric, 2) AS stake
                FROM (SELECT g, random() AS u FROM generate_series(1, %(bets)s) AS g) AS s
            ) AS x
            ORDER BY g""",
        {"client": shape.client_id, "first_round": first_round, "half": rounds // 2,
         "per_round": shape.bets_per_round, "first_account": first_account, "accounts": shape.accounts,
         "side": side, "sides": len(SIDE_BET_TYPES), "side_or_1": side or 1,
         "player": side + main * 0.45, "banker": side + main * 0.90, "bets": bets},
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
