"""How fast the back-office pages answer at scale, through a real HTTP server (PostgreSQL only).

    manage.py bench_pages [--bets 1000000] [--rounds 100000] [--games 5] [--accounts 10000]
                          [--days 60] [--requests 40] [--reuse] [--drop] [--workers 2]

1. Creates its own database, ``<name>_pages_bench`` next to the configured one (dropped first if it
   is there, unless --reuse finds it filled), and migrates it. The configured database is never
   written.
2. Builds the data set quickly and set-based: rounds dealt by the real engine (PF-1 from real seed
   pairs, so the round page verifies them) and written with COPY; bets, their ledger (a running
   balance per account), settlement batches and audit events with ``INSERT … SELECT`` over
   ``generate_series``. Two games change configuration mid-way (a multiplier, the shoe). Then the
   daily aggregates are rebuilt from it (settlement.aggregates) and the tables are vacuumed and
   analysed.
3. Starts gunicorn on 127.0.0.1 (DEBUG off, a random SECRET_KEY, persistent database connections),
   signs in to the admin as a superuser (session cookie) and takes an API token, then requests
   every admin list page (and the filters and searches operators use on the big lists), round
   pages, the dashboard (default, whole period, one game) and every GET endpoint of the API,
   round-robin, ``--requests`` times each after two warm-up requests, and prints p50 and p95 of the
   whole request per page. Target: p95 under 200 ms for every page.
"""

import http.client
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from datetime import timedelta
from decimal import Decimal
from http.cookies import SimpleCookie

from django.conf import settings
from django.contrib import admin
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, connections
from django.urls import NoReverseMatch, URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

TARGET_P95_MS = 200.0
SUFFIX = "_pages_bench"

# (slug, name, decks, player, banker, tie, max bet); changes: (game index, share of the period, changes)
GAMES = [
    ("bench-main", "Main table", 8, "2.0", "1.95", "9.0", "1000.00"),
    ("bench-six", "Six decks", 6, "2.0", "1.95", "8.0", "1000.00"),
    ("bench-single", "Single deck", 1, "2.0", "1.95", "11.0", "500.00"),
    ("bench-high", "High limit", 8, "2.0", "1.95", "9.0", "10000.00"),
    ("bench-promo", "Promotion table", 8, "2.0", "1.96", "8.5", "1000.00"),
]
CHANGES = [
    (0, 0.5, {"tie_multiplier": ("9.0000", "8.0000")}, "tie pays 8 from today"),
    (1, 0.66, {"decks": (6, 8), "banker_multiplier": ("1.9500", "1.9600")}, "new shoe, banker promotion"),
]
ROUNDS_PER_SEED_PAIR = 1000
BETS_PER_ROUND_DEFAULT = 10


def bench_database_name(name: str) -> str:
    return name if name.endswith(SUFFIX) else f"{name}{SUFFIX}"


def percentile(values, fraction: float) -> float:
    """Nearest-rank percentile of the values (fraction in (0, 1])."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Command(BaseCommand):
    help = "Build 1,000,000 bets on PostgreSQL in a database of its own and time every page through gunicorn."

    def add_arguments(self, parser):
        parser.add_argument("--bets", type=int, default=1_000_000)
        parser.add_argument("--rounds", type=int, default=100_000)
        parser.add_argument("--games", type=int, default=5, choices=range(1, len(GAMES) + 1))
        parser.add_argument("--accounts", type=int, default=10_000)
        parser.add_argument("--days", type=int, default=60, help="the data spans this many days, up to now")
        parser.add_argument("--requests", type=int, default=40, help="timed requests per page (default 40)")
        parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (default 2)")
        parser.add_argument("--reuse", action="store_true", help="keep the bench database if it holds the data")
        parser.add_argument("--drop", action="store_true", help="drop the bench database at the end")

    # --- set-up ------------------------------------------------------------------------------------

    def handle(self, *args, **options):
        if connection.vendor != "postgresql":
            raise CommandError("bench_pages needs PostgreSQL (DATABASE_URL=postgres://…): it measures the production "
                               "database at a million bets; the embedded SQLite is not that.")
        if options["bets"] < options["rounds"] or options["rounds"] < 10 * options["games"]:
            raise CommandError("--bets must be at least --rounds, and --rounds at least 10 per game")
        self.options = options
        # A SIGTERM ends the command through its finally blocks, so the server it started stops too.
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
        source = dict(settings.DATABASES["default"])
        self.bench_name = bench_database_name(source["NAME"])
        reuse = self._create_database(source)
        self._switch_to(self.bench_name)
        started = time.perf_counter()
        if not reuse:
            call_command("migrate", verbosity=0, interactive=False)
            self._say(f"migrated {self.bench_name} in {time.perf_counter() - started:.1f} s")
            self._build()
        else:
            call_command("migrate", verbosity=0, interactive=False)
            from settlement import aggregates

            started = time.perf_counter()
            counts = aggregates.rebuild()
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
            self._say(f"reusing the data of {self.bench_name}; aggregates rebuilt in "
                      f"{time.perf_counter() - started:.1f} s (" + ", ".join(f"{k} {v:,}" for k, v in counts.items()) + ")")
        try:
            self._measure()
        finally:
            if options["drop"]:
                self._drop_database(source)

    def _say(self, message: str) -> None:
        self.stderr.write(message)

    def _admin_connection(self, source):
        import psycopg

        return psycopg.connect(dbname="postgres", user=source.get("USER") or None,
                               password=source.get("PASSWORD") or None, host=source.get("HOST") or None,
                               port=source.get("PORT") or None, autocommit=True)

    def _create_database(self, source) -> bool:
        """Create the bench database; True when --reuse finds it already filled."""
        with self._admin_connection(source) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [self.bench_name]).fetchone()
            if exists and self.options["reuse"]:
                import psycopg

                try:
                    with psycopg.connect(dbname=self.bench_name, user=source.get("USER") or None,
                                         password=source.get("PASSWORD") or None, host=source.get("HOST") or None,
                                         port=source.get("PORT") or None) as bench:
                        bets = bench.execute("SELECT count(*) FROM games_bet").fetchone()[0]
                    if bets:
                        return True
                except psycopg.Error:
                    pass
            quoted = '"' + self.bench_name.replace('"', '""') + '"'
            conn.execute(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {quoted}")
        return False

    def _drop_database(self, source) -> None:
        connections.close_all()
        with self._admin_connection(source) as conn:
            conn.execute('DROP DATABASE IF EXISTS "{}" WITH (FORCE)'.format(self.bench_name.replace('"', '""')))
        self._say(f"dropped {self.bench_name}")

    def _switch_to(self, name: str) -> None:
        connections.close_all()
        settings.DATABASES["default"]["NAME"] = name
        connections["default"].settings_dict["NAME"] = name

    # --- data ----------------------------------------------------------------------------------------

    def _build(self) -> None:
        from django.contrib.auth.models import Group, User

        from games.choices import Role

        options = self.options
        timings = {}
        step = time.perf_counter()

        def lap(name):
            nonlocal step
            now = time.perf_counter()
            timings[name] = now - step
            self._say(f"  {name}: {now - step:.1f} s")
            step = now

        self.admin_password = secrets.token_urlsafe(16)
        User.objects.create_superuser("bench-admin", "bench@example.invalid", self.admin_password)
        client = User.objects.create_user("bench-game-server", password=secrets.token_urlsafe(16))
        client.groups.add(Group.objects.get(name=Role.INTEGRATION.group_name))
        self._write_state({"admin_password": self.admin_password})
        games = self._games()
        lap("users and games")
        self._rounds(games)
        lap(f"{options['rounds']:,} rounds dealt by the engine (COPY)")
        self._accounts_and_bets(client.pk)
        lap(f"{options['accounts']:,} accounts and {options['bets']:,} bets")
        self._ledger()
        lap("ledger and balances")
        self._batches_and_audit(client.pk, games)
        lap("settlement batches and audit events")
        from settlement import aggregates

        counts = aggregates.rebuild()
        lap("daily aggregates rebuilt (" + ", ".join(f"{k} {v:,}" for k, v in counts.items()) + ")")
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        lap("VACUUM ANALYZE")
        self._say(f"built in {sum(timings.values()):.1f} s")

    def _write_state(self, state: dict) -> None:
        with connection.cursor() as cursor:
            cursor.execute("CREATE TABLE IF NOT EXISTS bench_pages_state (key text PRIMARY KEY, value text)")
            for key, value in state.items():
                cursor.execute("INSERT INTO bench_pages_state VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
                               "SET value = excluded.value", [key, value])

    def _read_state(self, key: str) -> str:
        with connection.cursor() as cursor:
            cursor.execute("SELECT value FROM bench_pages_state WHERE key = %s", [key])
            return cursor.fetchone()[0]

    def _games(self) -> list:
        from games.models import GameInstance

        games = []
        for slug, name, decks, player, banker, tie, max_bet in GAMES[: self.options["games"]]:
            games.append(GameInstance.objects.create(
                slug=slug, name=name, decks=decks, player_multiplier=Decimal(player),
                banker_multiplier=Decimal(banker), tie_multiplier=Decimal(tie), min_bet=Decimal("1.00"),
                max_bet=Decimal(max_bet), currency="USD"))
        return games

    def _configuration_at(self, game_index: int, share: float) -> dict:
        _slug, _name, decks, player, banker, tie, _max = GAMES[game_index]
        config = {"decks": decks, "player_multiplier": player, "banker_multiplier": banker, "tie_multiplier": tie}
        for index, at, changes, _reason in CHANGES:
            if index == game_index and share >= at:
                for field, (_before, after) in changes.items():
                    config[field] = after
        return config

    def _rounds(self, games) -> None:
        """Rounds dealt by the engine from real seed pairs, written with COPY (ids 1…N)."""
        from games.engine import Dealer, server_seed_hash

        options = self.options
        rounds, days = options["rounds"], options["days"]
        now = timezone.now().replace(microsecond=0)
        self.start = now - timedelta(days=days) + timedelta(minutes=5)
        span = (now - timedelta(minutes=10) - self.start).total_seconds()
        per_game = [0] * len(games)
        pairs = {}  # (game index, pair number) -> [id, server seed, client seed, created, last time, count]
        dealers = {}
        pair_id = 0
        round_rows, config_rows = [], []
        # The tail: the last round of each game stays OPEN, 40 before them DEALT (the settlement queue).
        open_from = rounds - len(games)
        dealt_from = open_from - 40
        void_every = 331
        for index in range(rounds):
            game_index = index % len(games)
            game = games[game_index]
            share = index / rounds
            config = self._configuration_at(game_index, share)
            number = per_game[game_index]
            per_game[game_index] += 1
            key = (game_index, number // ROUNDS_PER_SEED_PAIR)
            opened = self.start + timedelta(seconds=span * share)
            if key not in pairs:
                pair_id += 1
                server_seed, client_seed = secrets.token_hex(32), secrets.token_hex(8)
                pairs[key] = [pair_id, server_seed, client_seed, opened - timedelta(seconds=1), opened, 0]
                dealers[key] = Dealer(server_seed, client_seed)
            pair = pairs[key]
            nonce = number % ROUNDS_PER_SEED_PAIR
            pair[4], pair[5] = opened, nonce + 1
            round_id = index + 1
            config_rows.append((round_id, config["player_multiplier"], config["banker_multiplier"],
                                config["tie_multiplier"]))
            if index >= open_from:
                round_rows.append((round_id, game.pk, pair[0], nonce, config["decks"], "OPEN", "[]", "[]", "[]",
                                   None, None, None, None, opened, None, None, None, "", 0))
                continue
            result = dealers[key].play(nonce, config["decks"]).as_dict()
            dealt = opened + timedelta(seconds=15)
            status, settled, voided, reason = "SETTLED", None, None, ""
            if index >= dealt_from:
                status = "DEALT"
            elif index % void_every == 7:
                status, voided, reason = "VOID", dealt + timedelta(seconds=5), "misdeal (bench)"
            else:
                lag_ms = 150 + int(secrets.randbelow(1000) ** 1.15)
                settled = dealt + timedelta(milliseconds=lag_ms)
            round_rows.append((
                round_id, game.pk, pair[0], nonce, config["decks"], status, json.dumps(result["cards"]),
                json.dumps(result["player"]["cards"]), json.dumps(result["banker"]["cards"]),
                result["player"]["score"], result["banker"]["score"], result["natural"], result["outcome"], opened,
                dealt, settled, voided, reason, 0,
            ))
        last_pair = {}
        for (game_index, number), pair in pairs.items():
            last_pair[game_index] = max(last_pair.get(game_index, -1), number)
        with connection.cursor() as cursor:
            raw = cursor.cursor
            with raw.copy("COPY games_seedpair (id, game_id, server_seed, server_seed_hash, client_seed, next_nonce, "
                          "created_at, revealed_at) FROM STDIN") as copy:
                for (game_index, number), (pid, server, client, created, last, count) in pairs.items():
                    revealed = None if number == last_pair[game_index] else last + timedelta(minutes=1)
                    copy.write_row((pid, games[game_index].pk, server, server_seed_hash(server), client, count,
                                    created, revealed))
            with raw.copy("COPY games_round (id, game_id, seed_pair_id, nonce, decks, status, cards, player_cards, "
                          "banker_cards, player_score, banker_score, \"natural\", outcome, opened_at, dealt_at, "
                          "settled_at, voided_at, void_reason, settlement_failures) FROM STDIN") as copy:
                for row in round_rows:
                    copy.write_row(row)
            cursor.execute("CREATE TABLE bench_round_config (round_id bigint PRIMARY KEY, player numeric, "
                           "banker numeric, tie numeric)")
            with raw.copy("COPY bench_round_config FROM STDIN") as copy:
                for row in config_rows:
                    copy.write_row(row)
            for table in ("games_seedpair", "games_round"):
                cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
            # The games hold the configuration of the end of the period.
            for game_index, game in enumerate(games):
                config = self._configuration_at(game_index, 1.0)
                cursor.execute("UPDATE games_gameinstance SET decks = %s, player_multiplier = %s, banker_multiplier = %s, "
                               "tie_multiplier = %s, created_at = %s WHERE id = %s",
                               [config["decks"], config["player_multiplier"], config["banker_multiplier"],
                                config["tie_multiplier"], self.start - timedelta(days=1), game.pk])

    def _accounts_and_bets(self, client_id: int) -> None:
        options = self.options
        per_round = max(1, options["bets"] // options["rounds"])
        with connection.cursor() as cursor:
            cursor.execute(
                """INSERT INTO settlement_account (id, external_id, currency, balance, created_at)
                   SELECT n, 'bench-player-' || lpad(n::text, 6, '0'), 'USD', 0, %s
                   FROM generate_series(1, %s) AS g(n)""",
                [self.start - timedelta(days=2), options["accounts"]])
            cursor.execute("SELECT setval(pg_get_serial_sequence('settlement_account', 'id'), %s)", [options["accounts"]])
            cursor.execute(
                """INSERT INTO games_bet (round_id, account_id, client_id, bet_type, stake, multiplier, idempotency_key,
                                          status, payout, placed_at, settled_at)
                   SELECT x.round_id, x.account_id, %(client)s, x.bet_type, x.stake,
                          CASE x.bet_type WHEN 'PLAYER' THEN c.player WHEN 'BANKER' THEN c.banker ELSE c.tie END,
                          'bench-' || x.n,
                          CASE WHEN r.status = 'SETTLED' THEN
                                   CASE WHEN x.bet_type = r.outcome THEN 'WON' WHEN r.outcome = 'TIE' THEN 'PUSH'
                                        ELSE 'LOST' END
                               WHEN r.status = 'VOID' THEN 'REFUNDED' ELSE 'PENDING' END,
                          CASE WHEN r.status = 'SETTLED' THEN
                                   CASE WHEN x.bet_type = r.outcome THEN floor(x.stake * CASE x.bet_type
                                            WHEN 'PLAYER' THEN c.player WHEN 'BANKER' THEN c.banker ELSE c.tie END
                                            * 100) / 100
                                        WHEN r.outcome = 'TIE' THEN x.stake ELSE 0 END
                               WHEN r.status = 'VOID' THEN x.stake END,
                          r.opened_at + make_interval(secs => (x.n %% %(per_round)s) * 0.4 + 0.1),
                          CASE WHEN r.status = 'SETTLED' THEN r.settled_at WHEN r.status = 'VOID' THEN r.voided_at END
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
                   ORDER BY x.n""",
                {"client": client_id, "per_round": per_round, "accounts": options["accounts"],
                 "bets": min(options["bets"], per_round * options["rounds"])})

    def _ledger(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                """INSERT INTO settlement_ledgerentry (account_id, bet_id, kind, amount, balance_after, reason, created_at)
                   SELECT account_id, bet_id, kind, amount,
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

    def _batches_and_audit(self, client_id: int, games) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                """INSERT INTO settlement_settlementbatch (worker, started_at, finished_at, rounds, bets, total_staked,
                                                          total_paid, round_ids, outcome, error)
                   SELECT 'bench:' || ((r.id - 1) / 200 % 4), MIN(r.settled_at), MAX(r.settled_at) + interval '40 ms',
                          COUNT(DISTINCT r.id), COUNT(b.id), COALESCE(SUM(b.stake), 0), COALESCE(SUM(b.payout), 0),
                          jsonb_agg(DISTINCT r.id), 'ok', ''
                   FROM games_round r LEFT JOIN games_bet b ON b.round_id = r.id
                   WHERE r.status = 'SETTLED'
                   GROUP BY (r.id - 1) / 200, 'bench:' || ((r.id - 1) / 200 % 4)
                   ORDER BY 2""")
            cursor.execute("SELECT hash FROM games_auditevent ORDER BY id DESC LIMIT 1")
            head = cursor.fetchone()
            changes, params = [], []
            for game_index, share, fields, reason in CHANGES:
                if game_index >= len(games):
                    continue
                at = self.start + (timezone.now() - timedelta(minutes=10) - self.start) * share
                changes.append("(%s::timestamptz, %s, %s::jsonb, %s::jsonb, %s)")
                params += [at, str(games[game_index].pk),
                           json.dumps({name: before for name, (before, _after) in fields.items()}),
                           json.dumps({name: after for name, (_before, after) in fields.items()}), reason]
            changes_sql = (" UNION ALL SELECT at, 'bench-admin', 'game.configured', 'gameinstance', object_id, "
                           "before_value, after_value, reason, 0 FROM (VALUES " + ", ".join(changes) +
                           ") AS c(at, object_id, before_value, after_value, reason)") if changes else ""
            cursor.execute(
                f"""INSERT INTO games_auditevent (created_at, actor_user_id, actor, action, object_type, object_id,
                                                 before, after, reason, request_id, source_ip, prev_hash, hash)
                    SELECT created_at, NULL, actor, action, object_type, object_id, before_value, after_value, reason,
                           '', NULL,
                           CASE WHEN rn = 1 THEN %s ELSE encode(sha256(('bench:' || (rn - 1))::bytea), 'hex') END,
                           encode(sha256(('bench:' || rn)::bytea), 'hex')
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
                [head[0] if head else "0" * 64, *params])

    # --- measurement ---------------------------------------------------------------------------------

    def _pages(self) -> list:
        """(label, path, auth) for every page to time; auth is "session" or "token"."""
        from games.models import Bet, GameInstance, Round
        from settlement.models import Account

        pages = []
        for model, model_admin in sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label):
            opts = model._meta
            url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
            pages.append((f"admin {opts.app_label}.{opts.model_name} list", url, "session"))
        game = GameInstance.objects.order_by("pk").first()
        account = Account.objects.order_by("pk")[min(10, Account.objects.count() - 1)]
        last = Round.objects.order_by("-pk").values_list("pk", flat=True).first()
        # As the admin's date filter writes them ("Past 7 days").
        today = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
        week_ago = urllib.parse.quote(str(today - timedelta(days=7)))
        tomorrow = urllib.parse.quote(str(today + timedelta(days=1)))
        variants = [
            ("bet", "status__exact=WON"), ("bet", "bet_type__exact=TIE"), ("bet", f"round__game__id__exact={game.pk}"),
            ("bet", f"placed_at__gte={week_ago}&placed_at__lt={tomorrow}"), ("bet", f"q={account.external_id}"),
            ("bet", f"q={last}"), ("bet", "p=50"),
            ("round", "status__exact=DEALT"), ("round", "status__exact=VOID"), ("round", "outcome__exact=TIE"),
            ("round", f"game__id__exact={game.pk}"), ("round", "settlement=waiting"), ("round", "natural__exact=1"),
            ("round", f"q={last}"),
            ("auditevent", "action__exact=game.configured"), ("auditevent", "object_type__exact=round"),
            ("auditevent", f"q={last}"),
        ]
        for model_name, query in variants:
            app = "settlement" if model_name in ("account", "ledgerentry", "settlementbatch") else "games"
            pages.append((f"admin {app}.{model_name} ?{query}", reverse(f"admin:{app}_{model_name}_changelist") +
                          "?" + query, "session"))
        pages += [
            ("admin settlement.ledgerentry ?kind__exact=ADJUSTMENT",
             reverse("admin:settlement_ledgerentry_changelist") + "?kind__exact=ADJUSTMENT", "session"),
            ("admin settlement.ledgerentry ?q=account",
             reverse("admin:settlement_ledgerentry_changelist") + f"?q={account.external_id}", "session"),
            ("admin settlement.account ?q=account",
             reverse("admin:settlement_account_changelist") + f"?q={account.external_id}", "session"),
        ]
        settled = list(Round.objects.filter(status="SETTLED", seed_pair__revealed_at__isnull=False)
                       .order_by("-pk").values_list("pk", flat=True)[:1])
        if settled:
            pages.append(("admin round page (settled, verified)", reverse("admin:games_round_change", args=settled),
                          "session"))
        pages.append(("admin round page (dealt)", reverse("admin:games_round_change", args=[last - 10]), "session"))
        try:  # the round recall of the admin, where it has one
            recall = reverse("admin:games_round_recall")
        except NoReverseMatch:
            recall = None
        if recall:
            pages += [
                ("admin round recall ?round_id=", f"{recall}?round_id={last - 10}", "session"),
                ("admin round recall ?account=", f"{recall}?account={account.external_id}", "session"),
                ("admin round recall ?game=", f"{recall}?game={game.slug}", "session"),
            ]
        start = (timezone.now() - timedelta(days=self.options["days"])).date().isoformat()
        dashboard = reverse("admin:dashboard")
        pages += [
            ("dashboard (last 30 days)", dashboard, "session"),
            ("dashboard (whole period)", f"{dashboard}?start={start}&end={timezone.now().date().isoformat()}",
             "session"),
            ("dashboard (one game, whole period)",
             f"{dashboard}?start={start}&end={timezone.now().date().isoformat()}&game={game.slug}", "session"),
        ]
        samples = {"slug": game.slug, "external_id": account.external_id, "round_id": str(settled[0] if settled else last),
                   "bet_id": str(Bet.objects.order_by("-pk").values_list("pk", flat=True).first())}
        for label, path in self._api_paths(samples):
            pages.append((f"api {label}", path, "token"))
        pages += [
            ("api bets ?game=", f"/api/v1/bets/?game={game.slug}", "token"),
            ("api bets ?status=WON", "/api/v1/bets/?status=WON", "token"),
            ("api bets ?account=", f"/api/v1/bets/?account={account.external_id}", "token"),
            ("api rounds ?status=DEALT", "/api/v1/rounds/?status=DEALT", "token"),
            ("api rounds ?game=&status=SETTLED", f"/api/v1/rounds/?game={game.slug}&status=SETTLED", "token"),
        ]
        return pages

    def _api_paths(self, samples: dict) -> list:
        """Every GET endpoint under /api/v1/, its arguments filled with sample values."""
        found = []

        def walk(patterns, prefix):
            for pattern in patterns:
                if isinstance(pattern, URLResolver):
                    walk(pattern.url_patterns, prefix + str(pattern.pattern))
                elif isinstance(pattern, URLPattern):
                    route = prefix + str(pattern.pattern)
                    view = getattr(pattern.callback, "view_class", None)
                    needs = getattr(view, "required_permissions", {}) or {}
                    if not route.startswith("api/v1/") or "GET" not in needs:
                        continue
                    if any(name not in samples for name in pattern.pattern.converters):
                        continue
                    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda match: samples[match.group(1)], route)
                    found.append((pattern.name or route, "/" + path))

        walk(get_resolver().url_patterns, "")
        return found

    def _measure(self) -> None:
        from django.contrib.auth.models import User
        from rest_framework.authtoken.models import Token

        admin_user = User.objects.get(username="bench-admin")
        token, _ = Token.objects.get_or_create(user=admin_user)
        password = self._read_state("admin_password")
        pages = self._pages()
        connections.close_all()
        port = free_port()
        secret = secrets.token_urlsafe(40)
        db = settings.DATABASES["default"]
        auth = db.get("USER") or ""
        if db.get("PASSWORD"):
            auth += ":" + urllib.parse.quote(db["PASSWORD"], safe="")
        url = f"postgres://{auth + '@' if auth else ''}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/" \
              f"{self.bench_name}"
        env = {**os.environ, "DATABASE_URL": url, "DEBUG": "0", "SECRET_KEY": secret,
               "ALLOWED_HOSTS": "127.0.0.1,localhost", "DATABASE_CONN_MAX_AGE": "600", "LOG_LEVEL": "WARNING"}
        env.pop("CELERY_BROKER_URL", None)
        gunicorn = os.path.join(os.path.dirname(sys.executable), "gunicorn")
        server = subprocess.Popen(
            [gunicorn, "baccarat_site.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", str(self.options["workers"]),
             "--log-level", "warning", "--timeout", "120"],
            cwd=settings.BASE_DIR, env=env, start_new_session=True,
        )
        try:
            self._wait_for(port, server)
            session = self._log_in(port, password)
            headers = {"session": {"Cookie": f"sessionid={session}"},
                       "token": {"Authorization": f"Token {token.key}", "Accept": "application/json"}}
            self._say(f"gunicorn on 127.0.0.1:{port} ({self.options['workers']} workers, DEBUG off); "
                      f"{len(pages)} pages, 2 warm-up + {self.options['requests']} timed requests each")
            times = {label: [] for label, _path, _auth in pages}
            statuses = {}
            for round_number in range(2 + self.options["requests"]):
                for label, path, auth in pages:
                    elapsed, status = self._get(port, path, headers[auth])
                    statuses[label] = status
                    if round_number >= 2:
                        times[label].append(elapsed)
            self._report(pages, times, statuses)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)

    def _wait_for(self, port: int, server) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise CommandError("gunicorn exited before it answered")
            try:
                self._get(port, "/admin/login/", {})
                return
            except OSError:
                time.sleep(0.3)
        raise CommandError("gunicorn did not answer within 60 s")

    @staticmethod
    def _request(port: int, method: str, path: str, headers: dict, body: bytes | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            conn.request(method, path, body=body, headers={"Host": "127.0.0.1", **headers})
            response = conn.getresponse()
            content = response.read()
            return response, content
        finally:
            conn.close()

    def _get(self, port: int, path: str, headers: dict):
        started = time.perf_counter()
        response, _content = self._request(port, "GET", path, headers)
        return (time.perf_counter() - started) * 1000, response.status

    def _log_in(self, port: int, password: str) -> str:
        response, content = self._request(port, "GET", "/admin/login/", {})
        cookie = SimpleCookie(response.getheader("Set-Cookie"))
        csrf = cookie["csrftoken"].value
        marker = b'name="csrfmiddlewaretoken" value="'
        start = content.index(marker) + len(marker)
        form_token = content[start:content.index(b'"', start)].decode()
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": form_token, "username": "bench-admin",
                                       "password": password, "next": "/admin/"}).encode()
        response, _ = self._request(port, "POST", "/admin/login/", {
            "Cookie": f"csrftoken={csrf}", "Content-Type": "application/x-www-form-urlencoded",
            "Referer": f"http://127.0.0.1:{port}/admin/login/"}, body)
        session = SimpleCookie(response.getheader("Set-Cookie") or "").get("sessionid")
        if response.status != 302 or session is None:
            raise CommandError(f"could not sign in to the admin (HTTP {response.status})")
        return session.value

    def _report(self, pages, times, statuses) -> None:
        width = max(len(label) for label, _p, _a in pages)
        lines = [f"{'page':<{width}}  {'status':>6}  {'p50 ms':>8}  {'p95 ms':>8}  target"]
        slow, failed = [], []
        for label, _path, _auth in pages:
            p50, p95 = percentile(times[label], 0.5), percentile(times[label], 0.95)
            ok = p95 < TARGET_P95_MS
            if statuses[label] != 200:
                failed.append(label)
            elif not ok:
                slow.append(label)
            lines.append(f"{label:<{width}}  {statuses[label]:>6}  {p50:>8.1f}  {p95:>8.1f}  "
                         f"{'ok' if ok else 'SLOW'}")
        self.stdout.write("\n".join(lines))
        every = [value for label in times for value in times[label]]
        self.stdout.write(f"\n{len(pages)} pages, {len(every):,} timed requests; overall p50 "
                          f"{percentile(every, 0.5):.1f} ms, p95 {percentile(every, 0.95):.1f} ms.")
        if failed:
            self.stdout.write(f"Not HTTP 200: {', '.join(failed)}")
        if slow:
            self.stdout.write(f"p95 at or over {TARGET_P95_MS:.0f} ms: {', '.join(slow)}")
        else:
            self.stdout.write(f"Every page met the target (p95 under {TARGET_P95_MS:.0f} ms).")
