"""Benchmark of settlement: the worker path against the one-statement floor and a naive ORM loop."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.test.utils import override_settings
from django.utils import timezone

from games.choices import BetStatus, RoundStatus
from games.engine import Dealer, bet_return, server_seed_hash, settlement_kind
from games.models import Bet, GameInstance, Round, SeedPair
from settlement.choices import LedgerKind
from settlement.models import Account, LedgerEntry, SettlementBatch
from settlement.services import MAX_SETTLEMENT_FAILURES

HELP = """\
Benchmark settlement on PostgreSQL: bets settled per second by the real worker path (a Celery
worker process running settlement.sweep), next to (a) the floor, one set-based SQL statement doing
the minimum equivalent writes, and (b) a naive row-by-row ORM loop (measured on a sample), each on
the same freshly generated data set (generation is not timed). It prints wall-clock bets/s, bets
per CPU second (the Python process plus its database backend: steadier on a busy machine), the
ratios worker/floor (target >= 0.50) and worker/naive (target >= 20x), the worker's peak memory
(VmHWM) at two sizes, and an exactly-once check of the worker's result from the database.

The command WIPES every table of the games and settlement apps (games, rounds, bets, accounts,
ledger, batches, audit events, aggregates), so it runs only on a database whose name ends in
"bench" (or with --force). It creates that database and migrates it when it does not exist. It
needs PostgreSQL and a broker (Redis database 14 by default):

    SECRET_KEY=bench DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_bench \\
        python manage.py bench_settlement --bets 200000

(by hand, the same: createdb -h 127.0.0.1 -U postgres baccarat_bench; DATABASE_URL=... python
manage.py migrate; then the command above). The worker runs with --pool=solo, a single process
whose /proc/<pid>/status holds its peak memory; SETTLEMENT_BATCH_ROUNDS in the environment (or
--batch-rounds) sets the size of its batches. On a busy machine, --repeat 3 compares the best of
three runs of each.
"""

# The expected settlement of a bet, in SQL: the floor writes it and the check compares with it.
# Rounded down to the cent; a tie pushes Player and Banker bets; the bet's own multiplier.
EXPECTED_PAYOUT = """CASE WHEN b.bet_type = r.outcome THEN trunc(b.stake * b.multiplier, 2)
                          WHEN r.outcome = 'TIE' THEN b.stake ELSE 0 END"""
EXPECTED_STATUS = """CASE WHEN b.bet_type = r.outcome THEN 'WON'
                          WHEN r.outcome = 'TIE' THEN 'PUSH' ELSE 'LOST' END"""

# The multipliers in force: the operator changed the game halfway through the rounds, so the bets
# of the second half carry other multipliers than those of the first (the bet's own one settles it).
MULTIPLIERS_BEFORE = {"PLAYER": "2.0000", "BANKER": "1.9500", "TIE": "9.0000"}
MULTIPLIERS_AFTER = {"PLAYER": "2.0000", "BANKER": "1.9000", "TIE": "8.5000"}

T_GAME = GameInstance._meta.db_table
T_SEED = SeedPair._meta.db_table
T_ROUND = Round._meta.db_table
T_BET = Bet._meta.db_table
T_ACCOUNT = Account._meta.db_table
T_LEDGER = LedgerEntry._meta.db_table
T_BATCH = SettlementBatch._meta.db_table


def bench_tables() -> list:
    """Every table of the games and settlement apps: what the command wipes before each build."""
    from django.apps import apps

    return [model._meta.db_table for label in ("games", "settlement")
            for model in apps.get_app_config(label).get_models()
            if model._meta.managed and not model._meta.proxy]


FLOOR_SQL = f"""
WITH settled_rounds AS (
    UPDATE {T_ROUND} SET status = 'SETTLED', settled_at = now()
    WHERE status = 'DEALT'
    RETURNING id, outcome
), settled_bets AS (
    UPDATE {T_BET} AS b
    SET status = {EXPECTED_STATUS}, payout = {EXPECTED_PAYOUT}, settled_at = now()
    FROM settled_rounds AS r
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
)
SELECT (SELECT count(*) FROM settled_bets), (SELECT count(*) FROM ledger)
"""

_STATUS_BY_KIND = {"WIN": BetStatus.WON, "LOSE": BetStatus.LOST, "PUSH": BetStatus.PUSH}


@dataclass(frozen=True)
class DataSet:
    """What was generated; equal fingerprints mean the same data set."""

    bets: int
    rounds: int
    accounts: int
    staked: Decimal
    to_pay: Decimal
    paid_bets: int


@dataclass
class Measurement:
    """One timed settlement: wall-clock seconds, and the CPU seconds of the processes doing it (the
    Python process and its PostgreSQL backend), which other load on the machine disturbs less."""

    bets: int
    seconds: float
    cpu_seconds: float | None = None
    workers: int = 0
    idle_kb: list = field(default_factory=list)
    peak_kb: list = field(default_factory=list)
    batches: int = 0
    failed_batches: int = 0
    largest_batch: int = 0
    in_batch_seconds: float = 0.0
    autovacuum: list = field(default_factory=list)
    problems: list = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.bets / self.seconds

    @property
    def cpu_rate(self) -> float | None:
        return self.bets / self.cpu_seconds if self.cpu_seconds else None


def _cpu_seconds(pid: int, default: float | None = None) -> float:
    """User + system CPU seconds a process has used (/proc/<pid>/stat); ``default`` once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        if default is None:
            raise
        return default
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _with_query(url: str, **params) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.update(params)
    return urlunsplit(parts._replace(query=urlencode(query)))


class Command(BaseCommand):
    help = HELP

    def create_parser(self, prog_name, subcommand, **kwargs):
        from argparse import RawDescriptionHelpFormatter

        kwargs["formatter_class"] = RawDescriptionHelpFormatter
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--bets", type=int, default=200_000, help="bets in the data set (default 200000)")
        parser.add_argument("--bets-per-round", type=int, default=50, help="default 50")
        parser.add_argument("--accounts", type=int, default=1000, help="default 1000")
        parser.add_argument("--workers", type=int, default=1, help="worker processes for the worker path (default 1)")
        parser.add_argument("--naive-sample", type=int, default=5000,
                            help="bets the naive loop settles (it is slow; default 5000)")
        parser.add_argument("--memory-sizes", default="",
                            help="bet counts at which to measure the worker's peak memory, comma-separated "
                                 "(default: BETS/4 and BETS)")
        parser.add_argument("--broker", default="redis://127.0.0.1:6379/14",
                            help="Celery broker for the worker (default redis://127.0.0.1:6379/14)")
        parser.add_argument("--batch-rounds", type=int, default=None,
                            help="SETTLEMENT_BATCH_ROUNDS for the worker (default: the environment's, or 200)")
        parser.add_argument("--seed", type=int, default=42, help="seed of the data set (default 42)")
        parser.add_argument("--repeat", type=int, default=1,
                            help="measure (a), (b) and (c) this many times each, on fresh data every time, and "
                                 "compare the best of each: on a busy machine one run can be disturbed "
                                 "(default 1)")
        parser.add_argument("--force", action="store_true",
                            help="run on a database whose name does not end in 'bench' (its data is WIPED)")

    # --- the run ---------------------------------------------------------------------------

    def handle(self, *args, **options):
        self.options = options
        bets = options["bets"]
        if min(bets, options["bets_per_round"], options["accounts"], options["workers"], options["repeat"],
               options["naive_sample"]) < 1:
            raise CommandError("--bets, --bets-per-round, --accounts, --workers, --naive-sample and --repeat "
                               "must be at least 1.")
        memory_sizes = self._memory_sizes(options["memory_sizes"], bets)
        self._check_database(options["force"])
        self._prepare_database()
        self.client_id = self._bench_client()
        self.batch_rounds = options["batch_rounds"] or int(os.environ.get("SETTLEMENT_BATCH_ROUNDS", "200"))
        started = time.perf_counter()
        db = connection.settings_dict["NAME"]
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            version = cursor.fetchone()[0]
        self.say(f"bench_settlement: {bets} bets, {options['bets_per_round']} per round, {options['accounts']} "
                 f"accounts; PostgreSQL {version}, database {db}; worker batches of {self.batch_rounds} rounds")

        repeat = options["repeat"]
        data = None
        floors, naives, runs = [], [], {}
        # (a), (b) and (c) in turn, repeat times: a busy spell on the machine then hits all three.
        for _ in range(repeat):
            fresh = self._build(bets)
            if data is None:
                data = fresh
                self.say(f"data set: {data.bets} bets in {data.rounds} rounds, {data.accounts} accounts, "
                         f"staked {data.staked}, to pay {data.to_pay} on {data.paid_bets} bets")
            self._same(data, fresh)
            floor = self._floor(bets)
            floor.problems = self._verify(expect_all=True, data=data)
            floors.append(floor)
            self.say(f"(a) floor: {bets} bets in {floor.seconds:.3f} s{self._cpu(floor)}; "
                     f"check: {self._ok(floor.problems)}")

            self._same(data, self._build(bets))
            naive = self._naive(options["naive_sample"])
            naive.problems = self._verify(expect_all=False, data=data)
            naives.append(naive)
            self.say(f"(b) naive: {naive.bets} bets in {naive.seconds:.3f} s{self._cpu(naive)}; "
                     f"check: {self._ok(naive.problems)}")

            self._same(data, self._build(bets))
            runs.setdefault(bets, []).append(self._worker_measured(bets, data))
        # The worker's memory at the other sizes.
        for size in memory_sizes:
            if size != bets:
                runs.setdefault(size, []).append(self._worker_measured(size, self._build(size)))

        self._report(data, floors, naives, runs, memory_sizes)
        self.say(f"(total run time {time.perf_counter() - started:.0f} s)")
        if any(run.problems for size_runs in runs.values() for run in size_runs):
            raise CommandError("exactly once: FAILED (see above)")

    def say(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def _worker_measured(self, size: int, data: DataSet) -> Measurement:
        run = self._worker_run(size)
        run.problems += self._verify(expect_all=True, data=data)
        vacuum = f"; autovacuum meanwhile on {', '.join(run.autovacuum)}" if run.autovacuum else ""
        self.say(f"(c) worker: {size} bets in {run.seconds:.3f} s{self._cpu(run)}, {run.batches} batches "
                 f"(largest {run.largest_batch} bets, {run.in_batch_seconds:.3f} s inside batches); "
                 f"peak memory {self._mb(max(run.peak_kb))}{vacuum}; check: {self._ok(run.problems)}")
        return run

    @staticmethod
    def _cpu(measurement: Measurement) -> str:
        if measurement.cpu_seconds is None:
            return ""
        return f" ({measurement.cpu_seconds:.3f} CPU s)"

    @staticmethod
    def _ok(problems: list) -> str:
        return "OK" if not problems else "FAILED: " + "; ".join(problems)

    @staticmethod
    def _mb(kb: int) -> str:
        return f"{kb / 1024:.1f} MB"

    @staticmethod
    def _memory_sizes(text: str, bets: int) -> list:
        if not text:
            return sorted({max(1, bets // 4), bets})
        try:
            sizes = sorted({int(part) for part in text.split(",") if part.strip()})
        except ValueError:
            raise CommandError("--memory-sizes takes bet counts separated by commas, e.g. 50000,200000") from None
        if len(sizes) < 2 or sizes[0] < 1:
            raise CommandError("--memory-sizes needs at least two positive bet counts.")
        return sizes

    # --- the database ------------------------------------------------------------------------

    def _check_database(self, force: bool) -> None:
        if connection.vendor != "postgresql":
            raise CommandError(
                f"bench_settlement runs on PostgreSQL only; this database is {connection.vendor}. "
                "Run it with DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_bench "
                "(the command creates and migrates that database if needed)."
            )
        name = connection.settings_dict["NAME"] or ""
        if not name.endswith("bench") and not force:
            raise CommandError(
                f"bench_settlement wipes the database it runs on, and {name!r} does not end in 'bench'. "
                "Use a database of its own, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_bench "
                "(created and migrated on the first run), or pass --force to wipe this one."
            )

    def _prepare_database(self) -> None:
        """Create the database when it does not exist, then bring its schema up to date."""
        import psycopg
        from psycopg import sql

        params = connection.settings_dict
        name = params["NAME"]
        try:
            maintenance = psycopg.connect(
                dbname="postgres", host=params["HOST"] or None, port=params["PORT"] or None,
                user=params["USER"] or None, password=params["PASSWORD"] or None, autocommit=True,
                connect_timeout=10,
            )
        except psycopg.Error as error:
            maintenance = None
            self.say(f"(cannot reach the maintenance database to check that {name} exists: {error})")
        if maintenance is not None:
            with maintenance:
                exists = maintenance.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
                if not exists:
                    self.say(f"creating database {name}")
                    maintenance.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        call_command("migrate", interactive=False, verbosity=0)

    def _bench_client(self) -> int:
        user, _ = get_user_model().objects.get_or_create(username="bench-client", defaults={"is_active": True})
        return user.pk

    def _checkpoint(self, cursor) -> None:
        """Start every measurement from the same state: fresh statistics, no dirty pages pending."""
        for table in bench_tables():
            cursor.execute(f"VACUUM ANALYZE {table}")
        try:
            cursor.execute("CHECKPOINT")
        except Exception:  # noqa: BLE001 - not a superuser: measure without the checkpoint
            pass

    # --- the data set ------------------------------------------------------------------------

    def _build(self, bets: int) -> DataSet:
        """Wipe the bench tables and generate the data set (not timed): rounds already DEALT,
        funded accounts, PENDING bets and their STAKE ledger entries, balances equal to ledgers."""
        started = time.perf_counter()
        per_round = self.options["bets_per_round"]
        accounts = self.options["accounts"]
        rounds = -(-bets // per_round)
        half = rounds // 2
        seed = self.options["seed"]
        server_seed = server_seed_hash(f"bench-server-seed-{seed}")
        client_seed = f"bench-client-{seed}"
        dealer = Dealer(server_seed, client_seed)
        decks = 8
        nonces, cards, player_cards, banker_cards, player_scores, banker_scores, naturals, outcomes = (
            [] for _ in range(8))
        import json

        for nonce in range(rounds):
            result = dealer.play(nonce, decks)
            dealt = result.as_dict()
            nonces.append(nonce)
            cards.append(json.dumps(dealt["cards"]))
            player_cards.append(json.dumps(dealt["player"]["cards"]))
            banker_cards.append(json.dumps(dealt["banker"]["cards"]))
            player_scores.append(result.player_score)
            banker_scores.append(result.banker_score)
            naturals.append(result.natural)
            outcomes.append(str(result.outcome))

        def multiplier_case(values: dict) -> str:
            return "CASE bet_type " + " ".join(
                f"WHEN '{bet_type}' THEN {value}" for bet_type, value in values.items()) + " END"

        with connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {', '.join(bench_tables())} RESTART IDENTITY CASCADE")
            cursor.execute(
                f"""INSERT INTO {T_GAME} (slug, name, status, decks, player_multiplier, banker_multiplier,
                        tie_multiplier, min_bet, max_bet, currency, created_at, updated_at)
                    VALUES ('bench-table', 'Bench table', 'active', %s, %s, %s, %s, 1.00, 1000.00, 'USD',
                            now(), now())
                    RETURNING id""",
                [decks, MULTIPLIERS_AFTER["PLAYER"], MULTIPLIERS_AFTER["BANKER"], MULTIPLIERS_AFTER["TIE"]],
            )
            game_id = cursor.fetchone()[0]
            cursor.execute(
                f"""INSERT INTO {T_SEED} (game_id, server_seed, server_seed_hash, client_seed, next_nonce,
                        created_at, revealed_at)
                    VALUES (%s, %s, %s, %s, %s, now(), NULL) RETURNING id""",
                [game_id, server_seed, server_seed_hash(server_seed), client_seed, rounds],
            )
            seed_pair_id = cursor.fetchone()[0]
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
                [game_id, seed_pair_id, decks, nonces, cards, player_cards, banker_cards, player_scores,
                 banker_scores, naturals, outcomes],
            )
            cursor.execute(f"SELECT min(id) FROM {T_ROUND}")
            first_round = cursor.fetchone()[0]
            cursor.execute(
                f"""INSERT INTO {T_ACCOUNT} (external_id, currency, balance, created_at)
                    SELECT 'bench-' || lpad(i::text, 7, '0'), 'USD', 0, now()
                    FROM generate_series(1, %s) AS i ORDER BY i""",
                [accounts],
            )
            cursor.execute(f"SELECT min(id) FROM {T_ACCOUNT}")
            first_account = cursor.fetchone()[0]
            # Random types (45 % Player, 45 % Banker, 10 % Tie), stakes from 1.00 to 100.00 and
            # accounts, the same on every build: the generator is seeded in this session.
            cursor.execute("SELECT setseed(%s)", [(seed % 1999) / 1999])
            cursor.execute(
                f"""INSERT INTO {T_BET} (round_id, account_id, client_id, bet_type, stake, multiplier,
                        idempotency_key, status, payout, placed_at, settled_at)
                    SELECT round_id, account_id, %s, bet_type, stake,
                           CASE WHEN round_id - %s < %s THEN {multiplier_case(MULTIPLIERS_BEFORE)}
                                ELSE {multiplier_case(MULTIPLIERS_AFTER)} END,
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
                [self.client_id, first_round, half, first_round, per_round, first_account, accounts, bets],
            )
            # A deposit per account covering its stakes and more, then a STAKE entry per bet.
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
            cursor.execute(
                f"""SELECT count(*), COALESCE(sum(b.stake), 0), COALESCE(sum({EXPECTED_PAYOUT}), 0),
                           count(*) FILTER (WHERE {EXPECTED_PAYOUT} > 0)
                    FROM {T_BET} AS b JOIN {T_ROUND} AS r ON r.id = b.round_id"""
            )
            count, staked, to_pay, paid_bets = cursor.fetchone()
            self._checkpoint(cursor)
        self.say(f"  (generated {bets} bets in {time.perf_counter() - started:.1f} s, not timed)")
        return DataSet(count, rounds, accounts, staked, to_pay, paid_bets)

    @staticmethod
    def _same(first: DataSet, second: DataSet) -> None:
        if first != second:
            raise CommandError(f"The data sets differ between measurements: {first} != {second}")

    # --- (a) the floor ----------------------------------------------------------------------

    def _floor(self, bets: int) -> Measurement:
        with connection.cursor() as cursor:
            backend = self._backend_pid(cursor)
            cpu = _cpu_seconds(backend)
            started = time.perf_counter()
            with transaction.atomic():
                cursor.execute(FLOOR_SQL)
                cursor.fetchone()
            seconds = time.perf_counter() - started
            cpu = _cpu_seconds(backend) - cpu
        return Measurement(bets=bets, seconds=seconds, cpu_seconds=cpu)

    @staticmethod
    def _backend_pid(cursor) -> int:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]

    # --- (b) the naive loop -----------------------------------------------------------------

    def _naive(self, sample: int) -> tuple:
        """Row by row, as a typical implementation would write it; on the first rounds only."""
        per_round = self.options["bets_per_round"]
        round_ids = list(Round.objects.filter(status=RoundStatus.DEALT).order_by("pk")
                         .values_list("pk", flat=True)[:max(1, -(-sample // per_round))])
        count = Bet.objects.filter(round_id__in=round_ids).count()
        with connection.cursor() as cursor:
            backend = self._backend_pid(cursor)
        cpu = _cpu_seconds(backend) + _cpu_seconds(os.getpid())
        with override_settings(DEBUG=False):  # no query log: the loop is slow enough as it is
            started = time.perf_counter()
            for round_ in Round.objects.filter(pk__in=round_ids, status=RoundStatus.DEALT).order_by("pk"):
                with transaction.atomic():
                    for bet in Bet.objects.filter(round=round_, status=BetStatus.PENDING).order_by("pk"):
                        returned = bet_return(bet.bet_type, bet.stake, round_.outcome, bet.multiplier)
                        bet.status = _STATUS_BY_KIND[settlement_kind(bet.bet_type, round_.outcome)]
                        bet.payout = returned
                        bet.settled_at = timezone.now()
                        bet.save()
                        if returned:
                            account = Account.objects.select_for_update().get(pk=bet.account_id)
                            account.balance += returned
                            account.save()
                            LedgerEntry.objects.create(account=account, bet=bet, kind=LedgerKind.PAYOUT,
                                                       amount=returned, balance_after=account.balance)
                    round_.status = RoundStatus.SETTLED
                    round_.settled_at = timezone.now()
                    round_.save()
            seconds = time.perf_counter() - started
        cpu = _cpu_seconds(backend) + _cpu_seconds(os.getpid()) - cpu
        return Measurement(bets=count, seconds=seconds, cpu_seconds=cpu)

    # --- (c) the worker path ----------------------------------------------------------------

    def _worker_run(self, bets: int) -> Measurement:
        from celery import Celery

        broker = self.options["broker"]
        app = Celery("bench_settlement", broker=broker, set_as_current=False)
        app.conf.broker_connection_retry_on_startup = False
        try:
            others = app.control.ping(timeout=1.0)
        except Exception as error:  # noqa: BLE001
            raise CommandError(f"The broker {broker} does not answer: {error}") from None
        if others:
            names = ", ".join(name for reply in others for name in reply)
            raise CommandError(f"Workers already listen on {broker} ({names}); they would take the bench's "
                               "tasks. Stop them or pass another --broker.")
        app.control.purge()

        env = dict(os.environ)
        application_name = f"bench-settlement-worker-{os.getpid()}"
        env.update({
            # The worker's connection is named, so its backend (and the CPU it spends) can be found.
            "DATABASE_URL": _with_query(os.environ["DATABASE_URL"], application_name=application_name),
            "CELERY_BROKER_URL": broker,
            "DEBUG": "0",  # no query log in the worker
            "SECRET_KEY": os.environ.get("SECRET_KEY") or "bench-settlement-only-key",
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "baccarat_site.settings"),
            "SETTLEMENT_BATCH_ROUNDS": str(self.batch_rounds),
        })
        logdir = Path(tempfile.mkdtemp(prefix="bench_settlement_"))
        workers = []
        try:
            for index in range(1, self.options["workers"] + 1):
                name = f"bench{index}-{os.getpid()}@{socket.gethostname()}"
                log = open(logdir / f"worker{index}.log", "wb")
                process = subprocess.Popen(
                    [sys.executable, "-m", "celery", "-A", "baccarat_site", "worker", "--pool=solo",
                     "--concurrency=1", "-n", name, "--without-mingle", "--without-gossip",
                     "--without-heartbeat", "-l", "INFO"],
                    cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                )
                workers.append((name, process, log))
            self._wait_ready(app, workers, logdir)
            run = Measurement(bets=bets, seconds=0.0, workers=len(workers))
            run.idle_kb = [self._proc_kb(process.pid, "VmHWM") for _, process, _ in workers]
            worker_cpu = sum(_cpu_seconds(process.pid) for _, process, _ in workers)
            backend_cpu = {}  # backend pid -> its CPU seconds when last seen

            timeout = max(300.0, bets / 500)
            with connection.cursor() as cursor:
                cursor.execute("SELECT now()")
                wall_start = cursor.fetchone()[0]
                autovacuum = set()
                started = time.perf_counter()
                for _ in workers:
                    app.send_task("settlement.sweep")
                polls = 0
                while True:
                    # The workers' database backends: found by name, their CPU read while they live
                    # (a worker closes its connection when the task ends).
                    if len(backend_cpu) < len(workers) or polls % 25 == 0:
                        cursor.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s",
                                       [application_name])
                        for (pid,) in cursor.fetchall():
                            backend_cpu.setdefault(pid, 0.0)
                    for pid in backend_cpu:
                        backend_cpu[pid] = _cpu_seconds(pid, default=backend_cpu[pid])
                    # Done when no DEALT round is left that a sweep would still try.
                    cursor.execute(
                        f"""SELECT EXISTS (SELECT 1 FROM {T_ROUND}
                                           WHERE status = 'DEALT' AND settlement_failures < %s)""",
                        [MAX_SETTLEMENT_FAILURES],
                    )
                    if not cursor.fetchone()[0]:
                        break
                    polls += 1
                    if polls % 25 == 0:
                        autovacuum |= self._autovacuum_now(cursor)
                    elapsed = time.perf_counter() - started
                    dead = [name for name, process, _ in workers if process.poll() is not None]
                    if dead or elapsed > timeout:
                        why = f"workers exited: {dead}" if dead else f"rounds still DEALT after {elapsed:.0f} s"
                        raise CommandError(f"The worker path did not finish ({why}); logs in {logdir}:\n"
                                           + self._tail(workers))
                    time.sleep(0.02)
                run.seconds = time.perf_counter() - started
                for pid in backend_cpu:
                    backend_cpu[pid] = _cpu_seconds(pid, default=backend_cpu[pid])
                cursor.execute(
                    """SELECT relname FROM pg_stat_user_tables
                       WHERE last_autovacuum >= %s OR last_autoanalyze >= %s""",
                    [wall_start, wall_start],
                )
                autovacuum |= {name for (name,) in cursor.fetchall()}
                run.autovacuum = sorted(autovacuum)
            run.peak_kb = [self._proc_kb(process.pid, "VmHWM") for _, process, _ in workers]
            worker_cpu = sum(_cpu_seconds(process.pid) for _, process, _ in workers) - worker_cpu
            # A backend's CPU from its start: the worker connects when the task starts.
            run.cpu_seconds = worker_cpu + sum(backend_cpu.values()) if backend_cpu else None
        finally:
            for _, process, log in workers:
                self._stop(process)
                log.close()
            app.close()
        shutil.rmtree(logdir, ignore_errors=True)  # kept when the run failed: the error names it
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT count(*) FILTER (WHERE outcome = 'ok'), count(*) FILTER (WHERE outcome = 'failed'),
                           COALESCE(max(bets), 0),
                           COALESCE(sum(extract(epoch FROM finished_at - started_at))
                                    FILTER (WHERE outcome = 'ok'), 0)
                    FROM {T_BATCH}"""
            )
            run.batches, run.failed_batches, run.largest_batch, in_batch = cursor.fetchone()
            run.in_batch_seconds = float(in_batch)
        if run.failed_batches:
            run.problems.append(f"{run.failed_batches} failed batches")
        return run

    def _wait_ready(self, app, workers: list, logdir: Path) -> None:
        deadline = time.monotonic() + 120
        waiting = {name for name, _, _ in workers}
        while waiting:
            for name, process, _ in workers:
                if process.poll() is not None:
                    raise CommandError(f"The worker {name} exited with {process.returncode}; logs in {logdir}:\n"
                                       + self._tail(workers))
            if time.monotonic() > deadline:
                raise CommandError(f"The workers did not answer within 120 s; logs in {logdir}:\n"
                                   + self._tail(workers))
            replies = app.control.ping(destination=sorted(waiting), timeout=0.5)
            for reply in replies:
                waiting -= set(reply)

    @staticmethod
    def _autovacuum_now(cursor) -> set:
        """The tables autovacuum is working on in this database right now."""
        cursor.execute(
            """SELECT query FROM pg_stat_activity
               WHERE backend_type = 'autovacuum worker' AND datname = current_database()"""
        )
        return {query.split()[-1].split(".")[-1] for (query,) in cursor.fetchall() if query}

    @staticmethod
    def _proc_kb(pid: int, key: str) -> int:
        """A value in kB of /proc/<pid>/status (VmHWM: the process's peak resident memory)."""
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        raise CommandError(f"No {key} in /proc/{pid}/status")

    @staticmethod
    def _stop(process) -> None:
        if process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)  # warm shutdown: the current task (if any) finishes
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    @staticmethod
    def _tail(workers: list) -> str:
        text = []
        for name, _, log in workers:
            log.flush()
            lines = Path(log.name).read_text(errors="replace").splitlines()[-30:]
            text.append(f"--- {name}\n" + "\n".join(lines))
        return "\n".join(text)

    # --- the check ----------------------------------------------------------------------------

    def _verify(self, *, expect_all: bool, data: DataSet) -> list:
        """From the database: every bet of a settled round settled once with the right payout, one
        PAYOUT entry per paid bet, balances equal to their ledgers, the ledger's running balance."""
        checks = [
            ("bets of settled rounds still pending", f"""
                SELECT count(*) FROM {T_BET} AS b JOIN {T_ROUND} AS r ON r.id = b.round_id
                WHERE r.status = 'SETTLED' AND b.status = 'PENDING'"""),
            ("bets of dealt rounds settled", f"""
                SELECT count(*) FROM {T_BET} AS b JOIN {T_ROUND} AS r ON r.id = b.round_id
                WHERE r.status = 'DEALT' AND b.status <> 'PENDING'"""),
            ("settled bets with a wrong status or payout", f"""
                SELECT count(*) FROM {T_BET} AS b JOIN {T_ROUND} AS r ON r.id = b.round_id
                WHERE b.status <> 'PENDING'
                  AND (b.status <> {EXPECTED_STATUS} OR b.payout <> {EXPECTED_PAYOUT})"""),
            ("bets without exactly one PAYOUT entry of their payout (or with one they should not have)", f"""
                SELECT count(*) FROM {T_BET} AS b
                LEFT JOIN (SELECT bet_id, count(*) AS n, sum(amount) AS total FROM {T_LEDGER}
                           WHERE kind = 'PAYOUT' GROUP BY bet_id) AS l ON l.bet_id = b.id
                WHERE (COALESCE(b.payout, 0) > 0 AND (l.n IS DISTINCT FROM 1 OR l.total <> b.payout))
                   OR (COALESCE(b.payout, 0) = 0 AND l.n IS NOT NULL)"""),
            ("bets without exactly one STAKE entry", f"""
                SELECT count(*) FROM {T_BET} AS b
                LEFT JOIN (SELECT bet_id, count(*) AS n FROM {T_LEDGER} WHERE kind = 'STAKE'
                           GROUP BY bet_id) AS l ON l.bet_id = b.id
                WHERE l.n IS DISTINCT FROM 1"""),
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
        problems = []
        with connection.cursor() as cursor:
            for label, query in checks:
                cursor.execute(query)
                count = cursor.fetchone()[0]
                if count:
                    problems.append(f"{count} {label}")
            if expect_all:
                cursor.execute(
                    f"""SELECT (SELECT count(*) FROM {T_ROUND} WHERE status = 'DEALT'),
                               (SELECT count(*) FROM {T_BET} WHERE status <> 'PENDING'),
                               (SELECT COALESCE(sum(amount), 0) FROM {T_LEDGER} WHERE kind = 'PAYOUT')"""
                )
                dealt, settled, paid = cursor.fetchone()
                if dealt:
                    problems.append(f"{dealt} rounds still DEALT")
                if settled != data.bets:
                    problems.append(f"{settled} bets settled of {data.bets}")
                if paid != data.to_pay:
                    problems.append(f"paid {paid}, expected {data.to_pay}")
        return problems

    # --- the report ---------------------------------------------------------------------------

    def _report(self, data, floors, naives, runs, memory_sizes) -> None:
        bets = data.bets
        repeat = len(floors)

        def best(results: list) -> Measurement:
            return max(results, key=lambda result: result.rate)

        def best_cpu(results: list) -> float | None:
            rates = [result.cpu_rate for result in results if result.cpu_rate]
            return max(rates) if rates else None

        def all_of(results: list) -> str:
            if len(results) < 2:
                return ""
            return "(best of " + ", ".join(f"{result.rate:,.0f}" for result in results) + ")"

        floor, naive, worker = best(floors), best(naives), best(runs[bets])
        workers = f"{worker.workers} worker{'s' if worker.workers > 1 else ''}"
        rows = [
            ("(a) floor: one SQL statement", floor, best_cpu(floors), all_of(floors)),
            ("(b) naive ORM loop", naive, best_cpu(naives),
             f"measured on a sample of {naive.bets} bets {all_of(naives)}"),
            (f"(c) worker path ({workers}, Celery)", worker, best_cpu(runs[bets]),
             f"send to done, through the broker {all_of(runs[bets])}"),
        ]
        self.say("")
        self.say(f"{'':38} {'bets':>8} {'seconds':>8} {'bets/s':>8}   {'bets per CPU s':>14}")
        for label, result, cpu_rate, note in rows:
            cpu = f"{cpu_rate:>14,.0f}" if cpu_rate else f"{'-':>14}"
            self.say(f"{label:38} {result.bets:>8} {result.seconds:>8.3f} {result.rate:>8,.0f}   {cpu}  "
                     f"{note}".rstrip())
        to_floor = worker.rate / floor.rate
        to_naive = worker.rate / naive.rate
        self.say("")
        self.say(f"worker / floor: {to_floor:.2f}   (target >= 0.50: {'met' if to_floor >= 0.5 else 'NOT met'})")
        self.say(f"worker / naive: {to_naive:.1f}x   (target >= 20x: {'met' if to_naive >= 20 else 'NOT met'})")
        cpu_floor, cpu_naive, cpu_worker = best_cpu(floors), best_cpu(naives), best_cpu(runs[bets])
        if cpu_floor and cpu_naive and cpu_worker:
            self.say(f"by CPU (the Python process and its database backend; other load disturbs it less): "
                     f"worker / floor {cpu_worker / cpu_floor:.2f}, worker / naive {cpu_worker / cpu_naive:.1f}x")
        if repeat > 1:
            self.say(f"(each figure the best of {repeat} runs on fresh copies of the same data)")
        self.say("")
        self.say("worker peak memory (VmHWM of the worker process, --pool=solo; idle = after start-up):")
        for size in memory_sizes:
            size_runs = runs[size]
            idle = max(max(run.idle_kb) for run in size_runs)
            peak = max(max(run.peak_kb) for run in size_runs)
            largest = max(run.largest_batch for run in size_runs)
            self.say(f"  {size:>9} bets: peak {self._mb(peak)} (idle {self._mb(idle)}, +{self._mb(peak - idle)} "
                     f"while settling; {size_runs[0].batches} batches, largest {largest} bets)")
        self.say("")
        floor_problems = [problem for result in floors for problem in result.problems]
        naive_problems = [problem for result in naives for problem in result.problems]
        worker_problems = [problem for size_runs in runs.values() for run in size_runs for problem in run.problems]
        self.say(f"floor check: {self._ok(floor_problems)}; naive check: {self._ok(naive_problems)}")
        self.say(f"exactly once: {self._ok(worker_problems)}")
