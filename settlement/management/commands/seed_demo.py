"""Fill the database with demo data played through the real services, and print how to sign in.

    python manage.py seed_demo [--rounds N] [--days D] [--seed S] [--server HOST:PORT] [--reset-passwords] [--force]

Creates the role groups, one demo user per role (named after the role, with the password
``<role>-demo-password``, which is why it refuses to run without DEBUG unless ``--force``), four
game instances (one suspended, the main table offering every side bet at its default paytable),
twenty funded accounts, and plays rounds with random bets:
``rounds_open``, ``bets_place_rounds`` (the rounds' bets in one bulk request), ``rounds_deal``, a few seed
rotations (so many rounds are verifiable), a few voided rounds and two configuration changes. Bet
choices come from a fixed random seed, so runs are repeatable; server seeds come from the services
(``secrets``).

What makes thousands of rounds quick is doing the same work in fewer statements and transactions:
a session's rounds commit together and the settlement sweep task settles them in one batch (no
settlement task per dealt round); within a session, the rounds chosen one after another are played
together by the set-based services (``rounds_open``, ``bets_place_rounds``, ``rounds_deal``: a few
statements each, whatever the number of rounds) until something must come between two rounds (a
top-up, a void, a seed rotation, a configuration change); and the audit log is sequenced once after
the play instead of after every commit. Every action is still the service's, with its checks and its
audit event, and the demo is the one that playing round by round gives.

The play is spread over the last ``--days`` days (``DemoClock``): sessions of rounds a few seconds
apart (rounds played together share the moment of the first), each settled right after it, so the
dashboard's 30-day charts show trends, the RTP converging on theory and the configuration changes
from the first look.

Running it again tops up: existing users, games and accounts are kept, and only the rounds missing
to reach ``--rounds`` are played.
"""

import os
import random
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.utils import timezone

from apitokens.choices import Scope
from apitokens.selectors import token_list
from apitokens.services import token_create, token_revoke
from audit.services import audit_sequencing_deferred
from backoffice.roles import Role, sync_role_groups
from core.errors import Conflict
from games import services
from games.choices import BetType, GameStatus, RoundStatus
from games.engine import REGISTRY, SIDE_BET_TYPES, side_bets_as_json
from games.management.commands.create_staff_user import create_staff_user
from games.models import GameInstance, Round
from settlement.receivers import dealt_rounds_left_to_the_sweep
from settlement.tasks import sweep
from wallet import services as wallet_services
from wallet.models import Account

ACTOR = "system:seed_demo"
DEFAULT_ROUNDS = 2000
DEFAULT_DAYS = 30
ROUND_SECONDS = 2  # between two rounds of a session (over all tables), so settlement lags by a minute or so
DEFAULT_SEED = 20240601
ROUNDS_PER_BATCH = 50  # rounds committed together, then settled by one run of the sweep task
DEMO_TOKEN_LABEL = "demo"

# One user per role, named after it, with a well-known password: this is demo data for a development
# server (the command refuses to run without DEBUG unless --force). Two operators, so that one can
# approve what the other proposes (four eyes) without the administrator.
DEMO_USERS = (
    ("admin", Role.ADMIN),
    ("operator", Role.OPERATOR),
    ("operator2", Role.OPERATOR),
    ("support", Role.SUPPORT),
    ("regulator", Role.REGULATOR),
    ("integration", Role.INTEGRATION),
)


def demo_key(round_, account) -> str:
    """A demo bet's idempotency key. Bulk bets are written in the order of their keys, so the round's id
    is zero-padded: the order is the rounds' whatever the number of digits of their ids, and the demo
    the same whatever ran on the database before it."""
    return f"demo-{round_.pk:012d}-{account.external_id}"


def demo_password(username: str) -> str:
    return f"{username}-demo-password"


# (slug, name, configuration, share of the rounds played). The last one is suspended.
DEMO_GAMES = (
    ("demo-main", "Main table", {"decks": 8, "min_bet": "1.00", "max_bet": "1000.00",
                                 "side_bets": {name: REGISTRY[name].default_paytable for name in SIDE_BET_TYPES}}, 6),
    ("demo-single-deck", "Single deck",
     {"decks": 1, "tie_multiplier": "8.0", "min_bet": "1.00", "max_bet": "500.00"}, 3),
    ("demo-high-limit", "High limit",
     {"decks": 6, "banker_multiplier": "1.96", "tie_multiplier": "9.5", "min_bet": "10.00",
      "max_bet": "5000.00"}, 2),
    ("demo-closed", "Closed table",
     {"decks": 4, "player_multiplier": "2.0", "banker_multiplier": "1.95", "tie_multiplier": "9.0",
      "min_bet": "5.00", "max_bet": "2000.00"}, 0),
)
SUSPENDED_SLUG = "demo-closed"
# (share of the play after which it happens, game, changes, reason): markers on the dashboard's charts.
CONFIGURATION_CHANGES = (
    (0.4, "demo-main", {"tie_multiplier": Decimal("8.0")}, "Demo: tie pays 7 to 1 from today"),
    (0.7, "demo-high-limit", {"banker_multiplier": Decimal("1.95"), "max_bet": Decimal("2500.00")},
     "Demo: standard banker commission, lower limit"),
)

ACCOUNT_COUNT = 20
ACCOUNT_PREFIX = "demo-player-"
TOP_UP = Decimal("2000.00")
STAKES = [Decimal(s) for s in ("1", "2", "5", "10", "10", "20", "25", "50", "100", "250", "500")]
BET_TYPES = [BetType.BANKER] * 9 + [BetType.PLAYER] * 9 + [BetType.TIE] * 2
SIDE_BET_SHARE = 0.25  # of the bets on a game that offers side bets, spread evenly over those it offers
BETS_PER_ROUND = [0, 1, 1, 1, 1, 2, 2, 3]
VOIDS = 20  # about this many rounds are voided (with their bets refunded) instead of dealt
ROTATIONS = 6
VOID_REASONS = ("Demo: card misdealt by the shoe", "Demo: table lost connection during betting",
                "Demo: duplicate round opened by the game server")


class Command(BaseCommand):
    help = "Create demo users, games and accounts, play rounds through the services, and print how to sign in."

    def add_arguments(self, parser):
        parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS,
                            help=f"Rounds (dealt or voided) the demo games should hold in all, besides the one "
                                 f"left open (default {DEFAULT_ROUNDS}).")
        parser.add_argument("--days", type=int, default=DEFAULT_DAYS,
                            help=f"Spread the play over this many days up to now (default {DEFAULT_DAYS}).")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                            help="Random seed of the bet choices (not of the server seeds).")
        default_server = f"{os.environ.get('HOST') or '127.0.0.1'}:{os.environ.get('PORT') or 8000}"
        parser.add_argument("--server", default=default_server,
                            help="HOST:PORT of the development server, for the sign-in address printed at the end "
                                 "(default $HOST:$PORT, else 127.0.0.1:8000).")
        parser.add_argument("--server-starts", action="store_true",
                            help="Say that the server starts next (make run) rather than how to start it.")
        parser.add_argument("--reset-passwords", action="store_true",
                            help="Set the demo password again on demo users that already exist.")
        parser.add_argument("--force", action="store_true",
                            help="Run even without DEBUG (the demo users have well-known passwords).")

    def handle(self, *args, rounds, seed, days=DEFAULT_DAYS, server="127.0.0.1:8000", server_starts=False,
               reset_passwords=False, force=False, **options):
        if rounds < 0:
            raise CommandError("--rounds must be zero or more.")
        if days < 1:
            raise CommandError("--days must be one or more.")
        if not settings.DEBUG and not force:
            raise CommandError("seed_demo creates users with well-known passwords: it runs only with DEBUG=1 "
                               "(a development set-up), or with --force.")
        started = time.monotonic()
        now = timezone.now()
        latest = Round.objects.filter(game__slug__in=[slug for slug, *_rest in DEMO_GAMES]).order_by(
            "-opened_at").values_list("opened_at", flat=True).first()
        # A first run starts `days` ago; a top-up goes on from the latest demo round.
        clock = DemoClock(start=max(now - timedelta(days=days), latest or now - timedelta(days=days)), end=now)
        stats = {"rounds": 0, "bets": 0, "voided": 0, "rotations": 0, "top_ups": 0, "swept": 0, "changes": 0}
        # The whole demo's audit events are sequenced once, at the end; its queries are not logged.
        with audit_sequencing_deferred(), queries_unlogged():
            with clock:
                sync_role_groups(apps)
                users, created = self._users(reset_passwords)
                operator, integration = users["operator"], users["integration"]
                games = self._games(operator)
                accounts = self._accounts(operator, random.Random(seed))
                playable = [game for game in games if game.status == GameStatus.ACTIVE]
                existing = Round.objects.filter(game__in=games).exclude(status=RoundStatus.OPEN).count()
                to_play = max(0, rounds - existing)
                if to_play:
                    self.stdout.write(f"Playing {to_play} rounds over {clock.start:%Y-%m-%d} – {clock.end:%Y-%m-%d} "
                                      f"({existing} already there)…")
                    player = DemoPlayer(
                        rng=random.Random(seed + existing), operator=operator, integration=integration,
                        games=playable, accounts=accounts, stats=stats, clock=clock,
                    )
                    player.play(to_play)
                else:
                    self.stdout.write(f"The demo games already hold {existing} rounds; none played.")
            self._leave_one_open_round(integration, games, accounts, random.Random(seed))
            # A last sweep settles whatever is still DEALT (say, what a broker's workers have not
            # reached yet), so the demo is consistent at once.
            stats["swept"] += sweep()
        self._report(users, created, games, stats, time.monotonic() - started, server, server_starts)

    # --- Set-up -----------------------------------------------------------------------------------

    def _users(self, reset_passwords):
        User = get_user_model()
        users, created = {}, set()
        self._tokens = {}  # the game server's token, new on every run: only its digest is kept
        for username, role in DEMO_USERS:
            user = User.objects.filter(username=username).first()
            if user is None:
                user, token = create_staff_user(username=username, role=role, password=demo_password(username),
                                                actor=ACTOR)
                created.add(username)
            else:
                if reset_passwords:
                    user.set_password(demo_password(username))
                    user.save(update_fields=["password"])
                token = self._new_demo_token(user) if role == Role.INTEGRATION else None
            self._tokens[username] = token
            users[username] = user
        if created:
            self.stdout.write(f"Created the demo users {', '.join(sorted(created))}.")
        return users, created

    def _new_demo_token(self, user) -> str:
        """A new token for the demo's game server, whose earlier tokens are revoked (none can be shown
        again)."""
        for token in token_list(owner=user).filter(enabled=True):
            token_revoke(token_id=token.pk, actor=ACTOR)
        return token_create(owner=user, actor=ACTOR, scopes=[Scope.WRITE], label=DEMO_TOKEN_LABEL)[1]

    def _games(self, operator):
        games = []
        for slug, name, config, _share in DEMO_GAMES:
            game = GameInstance.objects.filter(slug=slug).first()
            if game is None:
                fields = {key: Decimal(value) if key.endswith(("_bet", "_multiplier")) else value
                          for key, value in config.items()}
                if "side_bets" in fields:
                    fields["side_bets"] = side_bets_as_json(fields["side_bets"])
                game = services.game_create(actor=operator, slug=slug, name=name, client_seed=f"{slug}-client",
                                            **fields)
                if slug == SUSPENDED_SLUG:
                    game = services.game_update(game_id=game.pk, actor=operator,
                                                changes={"status": GameStatus.SUSPENDED},
                                                reason="Demo: table closed for maintenance")
                decks = f"{game.decks} deck{'s' if game.decks > 1 else ''}"
                self.stdout.write(f"Created game {slug} ({decks}, {game.status}).")
            games.append(game)
        return games

    def _accounts(self, operator, rng):
        accounts = []
        for number in range(1, ACCOUNT_COUNT + 1):
            external_id = f"{ACCOUNT_PREFIX}{number:02d}"
            deposit = Decimal(rng.choice([500, 1000, 1500, 2500, 5000]))
            account = Account.objects.filter(external_id=external_id).first()
            if account is None:
                account = wallet_services.account_create(actor=operator, external_id=external_id, currency="USD")
                wallet_services.account_adjust(external_id=external_id, actor=operator, amount=deposit,
                                                   reason="Demo: opening deposit")
            accounts.append(account)
        self.stdout.write(f"{len(accounts)} demo accounts ready.")
        return accounts

    def _leave_one_open_round(self, integration, games, accounts, rng):
        """One round taking bets, so the admin shows an open round that can be voided."""
        main = next(game for game in games if game.slug == DEMO_GAMES[0][0])
        if main.status != GameStatus.ACTIVE or Round.objects.filter(game=main, status=RoundStatus.OPEN).exists():
            return
        round_ = services.round_open(game_id=main.pk, actor=integration)
        for account in rng.sample(accounts, 2):
            balance = Account.objects.values_list("balance", flat=True).get(pk=account.pk)
            if balance >= Decimal("10.00"):
                services.bet_place(round_id=round_.pk, account_external_id=account.external_id,
                                   bet_type=rng.choice(BET_TYPES), stake=Decimal("10.00"),
                                   idempotency_key=demo_key(round_, account), client=integration)

    # --- Report -----------------------------------------------------------------------------------

    def _report(self, users, created, games, stats, seconds, server, server_starts):
        counts = {status: Round.objects.filter(game__in=games, status=status).count() for status in RoundStatus.values}
        self.stdout.write(
            f"Played {stats['rounds']} rounds with {stats['bets']} bets in {seconds:.1f} s: "
            f"{stats['voided']} voided, {stats['rotations']} seed rotations, {stats['changes']} configuration changes, "
            f"{stats['top_ups']} account top-ups, {stats['swept']} rounds settled by the settlement sweep."
        )
        by_status = ", ".join(f"{status} {count}" for status, count in counts.items())
        self.stdout.write(f"Demo rounds by status: {by_status}")
        self.stdout.write("")
        if server_starts:
            self.stdout.write(self.style.SUCCESS("Demo data is ready. The development server starts now; sign in at:"))
        else:
            self.stdout.write(self.style.SUCCESS(
                f"Demo data is ready. Start the server (DEBUG=1 python manage.py runserver {server}) and sign in at:"))
        self.stdout.write(f"  http://{server}/admin/")
        for username, role in DEMO_USERS:
            if role == Role.INTEGRATION:
                token = self._tokens[username]
                self.stdout.write(f"  {username:<12} API only (no admin sign-in); API token: {token}")
                continue
            note = "" if username in created else "  (unless changed since; --reset-passwords sets it again)"
            self.stdout.write(f"  {username:<12} password: {demo_password(username)}   ({role.group_name}){note}")
        self.stdout.write("  Each person then sets up a second factor at their first sign-in: scan the QR code the "
                          "page shows with an authenticator app (or type in its key), and keep the recovery codes.")


@contextmanager
def queries_unlogged():
    """While the demo is written, queries are not kept in ``connection.queries``.

    ``make run`` sets DEBUG, under which Django logs every query, each one's SQL composed with its
    parameters: work that would only feed a log that nobody reads. The queries themselves are the
    same.
    """
    connection.make_debug_cursor = connection.make_cursor
    try:
        yield
    finally:
        del connection.make_debug_cursor


class DemoClock:
    """While entered, ``django.utils.timezone.now()`` answers the demo's time instead of the real one.

    Every timestamp the services and models write (``auto_now_add`` included) reads that function, so
    rounds, bets, ledger entries, settlements and audit events are written as if played on the day
    the clock shows. It only moves forward (at the real pace between two settings), and it is restored
    on exit, whatever happens.
    """

    def __init__(self, *, start: datetime, end: datetime):
        self.start, self.end = start, end
        self._moment, self._set_at = start, time.monotonic()
        self._real_now = None

    def now(self) -> datetime:
        """The moment last set, plus the real time since: what takes time (a settlement) still does."""
        return self._moment + timedelta(seconds=time.monotonic() - self._set_at)

    def set(self, moment: datetime) -> None:
        self._moment, self._set_at = max(self.now(), moment), time.monotonic()

    def __enter__(self):
        self._real_now = timezone.now
        timezone.now = self.now
        return self

    def __exit__(self, *exc_info):
        timezone.now = self._real_now


@dataclass
class PlannedRound:
    """A round as the demo's dice chose it, before it is played: the game, the bets as
    (account, bet type, stake, whether the known balance covered it), the void reason of a round to
    void, and the moment it belongs to."""

    game: GameInstance
    bets: list
    void_reason: str | None
    moment: datetime


class DemoPlayer:
    """Plays rounds like a busy game server would: open, take a few bets, deal (now and then void).

    The rounds come in sessions of ``ROUNDS_PER_BATCH`` rounds a few seconds apart, spread evenly over
    the clock's span; the settlement sweep settles each session as it ends. Within a session the dice
    choose round after round (``plan_round``); the rounds chosen are played together (``flush``):
    opened by one ``rounds_open``, their bets placed by one ``bets_place_rounds``, dealt by one
    ``rounds_deal``, each in a few statements. Whatever must come between two rounds (a top-up, a
    void, a seed rotation, a configuration change) first plays the rounds chosen before it, so
    everything happens in the order, and with the result, of playing the rounds one by one.
    """

    def __init__(self, *, rng, operator, integration, games, accounts, stats, clock):
        self.rng = rng
        self.operator = operator
        self.integration = integration
        self.games = games
        self.weights = [next(share for slug, _n, _c, share in DEMO_GAMES if slug == game.slug) or 1 for game in games]
        self.accounts = accounts
        self.stats = stats
        self.clock = clock
        self.balances = {}
        self.void_every = 0
        self.planned = []
        self.moment = clock.start

    def play(self, count: int):
        if not self.games:
            return
        rotate_every = max(1, count // (ROTATIONS + 1))
        self.void_every = max(10, count // VOIDS)
        changes = [(int(share * count), slug, fields, reason) for share, slug, fields, reason in CONFIGURATION_CHANGES]
        sessions = -(-count // ROUNDS_PER_BATCH)
        session_span = timedelta(seconds=ROUND_SECONDS * (ROUNDS_PER_BATCH + 1))
        gap = max(timedelta(0), self.clock.end - self.clock.start - session_span) / sessions
        played = 0
        with dealt_rounds_left_to_the_sweep():
            for session in range(sessions):
                begins = self.clock.start + gap * session + gap * self.rng.random() * 0.8
                batch = min(ROUNDS_PER_BATCH, count - played)
                # A session's rounds commit together; every service call inside is still its own
                # atomic block. Then the settlement sweep task settles the session's dealt rounds.
                # Balances as of the last settlement; bets only lower them until the next one.
                self.balances = dict(Account.objects.filter(pk__in=[a.pk for a in self.accounts])
                                     .values_list("pk", "balance"))
                with transaction.atomic():
                    for number in range(batch):
                        self.plan_round(begins + timedelta(seconds=ROUND_SECONDS * number))
                        played += 1
                        if played % rotate_every == 0 and played < count:
                            self.play_chosen_then(self.moment)
                            self.rotate(self.games[(played // rotate_every - 1) % len(self.games)])
                        for at, slug, fields, reason in changes:
                            if at == played:
                                self.play_chosen_then(self.moment)
                                self.configure(slug, fields, reason)
                    self.flush()
                self.clock.set(begins + timedelta(seconds=ROUND_SECONDS * batch))
                self.stats["swept"] += sweep()

    def configure(self, slug, fields, reason):
        game = next((game for game in self.games if game.slug == slug), None)
        if game is None:
            return
        before = game.configuration()
        updated = services.game_update(game_id=game.pk, actor=self.operator, changes=fields, reason=reason)
        self.games[self.games.index(game)] = updated
        self.stats["changes"] += updated.configuration() != before

    def plan_round(self, moment: datetime):
        """Choose the next round: its game, its bets (an account short of its stake is topped up
        first) and whether it is voided. A round to void is played at once."""
        self.moment = moment
        game = self.rng.choices(self.games, weights=self.weights)[0]
        bets = []
        for account in self.rng.sample(self.accounts, self.rng.choice(BETS_PER_ROUND)):
            stake = self.stake(game)
            if self.balances[account.pk] < stake:
                self.play_chosen_then(moment)  # the top-up comes after the stakes of the rounds chosen before
                wallet_services.account_adjust(external_id=account.external_id, actor=self.operator, amount=TOP_UP,
                                               reason="Demo: top-up")
                self.balances[account.pk] += TOP_UP
                self.stats["top_ups"] += 1
            # The balance known here is at most the account's (refunds since the last settlement are
            # not counted): a stake it covers is surely taken, and counted now. One it does not cover
            # may or may not be: the round is played at once, and the stake counted if it was taken.
            covered = self.balances[account.pk] >= stake
            if covered:
                self.balances[account.pk] -= stake
            bets.append((account, self.bet_type(game), stake, covered))
        void = (self.stats["rounds"] + 1) % self.void_every == 0
        self.planned.append(PlannedRound(game, bets, self.rng.choice(VOID_REASONS) if void else None, moment))
        self.stats["rounds"] += 1
        if void or not all(covered for *_bet, covered in bets):
            self.flush()

    def play_chosen_then(self, moment: datetime):
        """Play the rounds chosen so far, then set the clock to ``moment`` for what comes between rounds."""
        self.flush()
        self.clock.set(moment)

    def flush(self):
        """Play the rounds chosen so far, as the moment of the first: open them, place their bets (a
        bet the service refuses is left out, as a refused request would be), deal them, and void the
        last if it is to be voided (only the last can be: choosing one plays it at once)."""
        planned, self.planned = self.planned, []
        if not planned:
            return
        self.clock.set(planned[0].moment)
        rounds = services.rounds_open(game_ids=[plan.game.pk for plan in planned], actor=self.integration)
        items = {round_.pk: {index: {"account_external_id": account.external_id, "bet_type": bet_type,
                                     "stake": stake, "idempotency_key": demo_key(round_, account)}
                             for index, (account, bet_type, stake, _covered) in enumerate(plan.bets)}
                 for round_, plan in zip(rounds, planned, strict=True) if plan.bets}
        outcomes = services.bets_place_rounds(items_by_round=items, client=self.integration)
        for round_, plan in zip(rounds, planned, strict=True):
            for index, (account, _bet_type, stake, covered) in enumerate(plan.bets):
                created = outcomes[round_.pk][index].created
                self.stats["bets"] += created
                self.balances[account.pk] -= stake * (created - covered)  # what was counted, set right
        services.rounds_deal(round_ids=[round_.pk for round_, plan in zip(rounds, planned, strict=True)
                                        if plan.void_reason is None], actor=self.integration)
        if planned[-1].void_reason is not None:
            services.round_void(round_id=rounds[-1].pk, actor=self.operator, reason=planned[-1].void_reason)
            self.stats["voided"] += 1

    def bet_type(self, game) -> str:
        if game.side_bets and self.rng.random() < SIDE_BET_SHARE:
            return self.rng.choice(list(game.side_bets))
        return self.rng.choice(BET_TYPES)

    def stake(self, game) -> Decimal:
        stake = self.rng.choice(STAKES)
        if game.min_bet >= Decimal("10"):
            stake *= 10
        return min(max(stake, game.min_bet), game.max_bet)

    def rotate(self, game):
        try:
            services.seed_rotate(game_id=game.pk, actor=self.operator, reason="Scheduled rotation")
        except Conflict:
            return
        self.stats["rotations"] += 1
