"""The data set of the pages benchmark, built quickly and set-based, and what the run keeps of it."""

import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import Group, User
from django.db import connection
from django.utils import timezone
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.partitioning import partitions_compact
from backoffice import second_factor
from backoffice.roles import Role
from settlement import aggregates

from .audit_log import sequence_and_sign
from .bets import insert_accounts_and_bets, insert_batches_and_audit, insert_ledger
from .games import create_games
from .months import open_months
from .rounds import insert_rounds

ADMIN_USERNAME = "bench-admin"


@dataclass(frozen=True)
class DataSize:
    bets: int
    rounds: int
    games: int
    accounts: int
    days: int  # the data spans this many days, up to now


def build(size: DataSize, say) -> None:
    """Users, games, rounds, bets, ledger, batches and audit events, the months closed compacted, the
    events sequenced and a head signed, then the daily aggregates rebuilt from them and the tables
    vacuumed and analysed; each step's time is said."""
    timings = {}
    step = time.perf_counter()

    def lap(name):
        nonlocal step
        now = time.perf_counter()
        timings[name] = now - step
        say(f"  {name}: {now - step:.1f} s")
        step = now

    now = timezone.now().replace(microsecond=0)
    start = now - timedelta(days=size.days) + timedelta(minutes=5)
    open_months(start, now)
    lap(f"monthly partitions from {start:%Y-%m} on")
    admin_password = secrets.token_urlsafe(16)
    User.objects.create_superuser(ADMIN_USERNAME, "bench@example.invalid", admin_password)
    client = User.objects.create_user("bench-game-server", password=secrets.token_urlsafe(16))
    client.groups.add(Group.objects.get(name=Role.INTEGRATION.group_name))
    write_state({"admin_password": admin_password})
    games = create_games(size.games)
    lap("users and games")
    insert_rounds(games, size.rounds, start, now)
    lap(f"{size.rounds:,} rounds dealt by the engine (COPY)")
    insert_accounts_and_bets(accounts=size.accounts, bets=size.bets, rounds=size.rounds, client_id=client.pk,
                             start=start)
    lap(f"{size.accounts:,} accounts and {size.bets:,} bets")
    insert_ledger()
    lap("ledger and balances")
    insert_batches_and_audit(games, start)
    with connection.cursor() as cursor:  # as autovacuum would before long: the sequencer's plans need them
        cursor.execute("ANALYZE games_auditevent")
    lap("settlement batches and audit events (analysed)")
    compacted = partitions_compact()  # as the daily task has done; its events sequenced with the others
    lap(f"{len(compacted)} partitions of the months closed compacted")
    write_state({"audit_public_key": sequence_and_sign()})
    lap("audit events sequenced, a head signed")
    counts = aggregates.rebuild()
    lap("daily aggregates rebuilt (" + ", ".join(f"{k} {v:,}" for k, v in counts.items()) + ")")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    lap("VACUUM ANALYZE")
    say(f"built in {sum(timings.values()):.1f} s")


def second_factor_code():
    """The bench administrator's second factor (a TOTP device, enrolled on first use, as
    ``create_staff_user --totp`` does): a callable giving the code of the moment."""
    admin = User.objects.get(username=ADMIN_USERNAME)
    device = TOTPDevice.objects.filter(user=admin, confirmed=True).first() or second_factor.enrol(admin)[0]
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    return lambda: f"{totp.token():0{device.digits}d}"


def write_state(state: dict) -> None:
    """Keep values in the bench database itself, for a later run that reuses it (--reuse)."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_pages_state (key text PRIMARY KEY, value text)")
        for key, value in state.items():
            cursor.execute("INSERT INTO bench_pages_state VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
                           "SET value = excluded.value", [key, value])


def read_state(key: str) -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT value FROM bench_pages_state WHERE key = %s", [key])
        row = cursor.fetchone()
        return row[0] if row else None
