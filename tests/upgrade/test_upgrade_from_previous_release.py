"""Upgrades keep every row: a database made by the previous release, with demo play in it, migrates
to the current code with nothing lost.

The previous release's source comes from ``git archive PREVIOUS_RELEASE``; its own ``manage.py``
(run through run_tree.py, so that none of the current checkout's modules load) migrates a fresh
PostgreSQL database, plays demo rounds (seed_demo) and adds the few rows demo play does not make.
A plain-SQL snapshot (tests/upgrade/snapshot.py) is taken; the current checkout's ``manage.py
migrate`` upgrades the database; then every table must hold the same rows (the rows of the tables
``migrate`` legitimately rewrites, content types, permissions and schedules, are compared by id),
every permission a group or user held is still held (by permission id: a moved model's permission
changes app label, not id), the audit chain and the daily aggregates check out, and the current ORM
reads the money consistently.

The database is its own ($TEST_UPGRADE_DATABASE_URL, by default ``baccarat_test_upgrade`` on the
tests' server), created and dropped here. Nothing from the project's apps is imported here: they move
between releases.
"""

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from dbutils.postgresql import urls as database_urls
from tests import app_role
from tests.conftest import service_missing
from tests.upgrade import snapshot

pytestmark = pytest.mark.services

# The previous release: the database this commit's code creates must upgrade to the current code.
# Move it forward when a release ships.
PREVIOUS_RELEASE = "00777c0"

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN_TREE = Path(__file__).resolve().parent / "run_tree.py"
DEMO_ROUNDS = 300
COMMAND_TIMEOUT = 300  # seconds, per manage.py command

# Tables demo play (and the additions below) must fill, so that the upgrade is tried on every kind
# of row. Names as of the previous release.
MUST_HAVE_ROWS = (
    "auth_group", "auth_group_permissions", "auth_permission", "auth_user", "auth_user_groups",
    "auth_user_user_permissions", "authtoken_token", "django_admin_log", "django_content_type",
    "django_session", "django_celery_beat_periodictask", "games_gameinstance", "games_seedpair",
    "games_round", "games_bet", "games_auditevent", "settlement_account", "settlement_ledgerentry",
    "settlement_settlementbatch", "settlement_dailybettotals", "settlement_dailyroundtotals",
    "settlement_activeaccountmonth",
)
LEDGER_KINDS = ("STAKE-", "PAYOUT+", "REFUND+", "ADJUSTMENT+", "ADJUSTMENT-")

# Run in the previous release (its own imports): what demo play does not make. A manual debit, a
# user holding permissions of its own (on the models that move), an admin log entry pointing at an
# account's content type, and a session.
ADDITIONS = """
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.contrib.sessions.backends.db import SessionStore
from settlement import services
from settlement.models import Account

operator = User.objects.get(username="operator")
account = Account.objects.order_by("-balance", "id").first()
services.account_adjust(external_id=account.external_id, actor=operator, amount="-1.25",
                        reason="Upgrade test: manual debit")
auditor = User.objects.create_user("upgrade-auditor", password=None, is_staff=True)
auditor.user_permissions.add(*Permission.objects.filter(
    codename__in=["view_account", "view_ledgerentry", "view_auditevent", "adjust_account"]))
LogEntry.objects.create(user=operator, content_type=ContentType.objects.get_for_model(Account),
                        object_id=str(account.pk), object_repr=str(account), action_flag=CHANGE,
                        change_message="Upgrade test")
session = SessionStore()
session["upgrade-test"] = True
session.create()
"""

# Run in either release: the models found by name wherever they live, the money read through the
# ORM. Prints one JSON object.
SMOKE = """
import json
from django.apps import apps
from django.db.models import Sum

def model(name):
    found = [m for m in apps.get_models() if m.__name__ == name]
    assert len(found) == 1, f"{name}: {found}"
    return found[0]

Account, LedgerEntry, Bet, AuditEvent = (model(n) for n in ("Account", "LedgerEntry", "Bet", "AuditEvent"))
sums = dict(LedgerEntry.objects.order_by().values("account").annotate(total=Sum("amount"))
            .values_list("account", "total"))
balances = {a.pk: a.balance for a in Account.objects.all()}
mismatches = {pk: [str(balance), str(sums.get(pk))] for pk, balance in balances.items()
              if balance != (sums.get(pk) or 0)}
print(json.dumps({
    "bets": Bet.objects.count(),
    "audit_events": AuditEvent.objects.count(),
    "balances": {str(pk): str(balance) for pk, balance in sorted(balances.items())},
    "mismatches": mismatches,
    "orphan_entries": LedgerEntry.objects.exclude(account__in=Account.objects.all()).count(),
    "apps": {m.__name__: m._meta.app_label + "." + m._meta.db_table
             for m in (Account, LedgerEntry, Bet, AuditEvent)},
}))
"""

# Run by the current checkout: each token of the previous release ($UPGRADE_TEST_TOKENS, a JSON list)
# sent on an API read; prints the statuses in order.
TOKENS_READ = """
import json, os
from django.test import Client
print(json.dumps([Client().get("/api/v1/games/", HTTP_AUTHORIZATION=f"Token {key}").status_code
                  for key in json.loads(os.environ["UPGRADE_TEST_TOKENS"])]))
"""
# The pepper the upgrade digests the old tokens with, and one that replaces it later.
PEPPER, NEXT_PEPPER = "upgrade-test-pepper-of-the-release", "upgrade-test-pepper-after-rotation"

WHERE_FROM = """
import json, baccarat_site, games, settlement
from django.apps import apps
print(json.dumps({"modules": [m.__file__ for m in (baccarat_site, games, settlement)],
                  "apps": [c.path for c in apps.get_app_configs()]}))
"""


def database_name(url: str) -> str:
    return psycopg.conninfo.conninfo_to_dict(url)["dbname"]


def maintenance(url: str) -> psycopg.Connection:
    return psycopg.connect(url, dbname="postgres", autocommit=True, connect_timeout=5)


@pytest.fixture
def upgrade_database(django_db_setup):
    """A fresh database of this test's own, dropped afterwards."""
    url = os.environ.get("TEST_UPGRADE_DATABASE_URL") or database_urls.to_url(
        app_role.owner_settings(), name="baccarat_test_upgrade")
    name = sql.Identifier(database_name(url))
    try:
        with maintenance(url) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(name))
    except psycopg.OperationalError as error:
        service_missing(f"needs PostgreSQL at {url} (TEST_UPGRADE_DATABASE_URL): {error}")
    yield url
    with maintenance(url) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))


@pytest.fixture
def previous_release(tmp_path) -> Path:
    """The previous release's source tree, from git."""
    try:
        archive = subprocess.run(["git", "archive", "--format=tar", PREVIOUS_RELEASE], cwd=REPO_ROOT,
                                 capture_output=True, timeout=60)
    except FileNotFoundError:
        service_missing("needs git to extract the previous release")
    if archive.returncode != 0:
        service_missing(f"cannot extract the previous release {PREVIOUS_RELEASE} with git archive in {REPO_ROOT} "
                        f"(a shallow clone? fetch it): {archive.stderr.decode(errors='replace').strip()}")
    tree = tmp_path / f"release-{PREVIOUS_RELEASE}"
    tree.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tree, filter="data")
    assert (tree / "manage.py").is_file(), f"{PREVIOUS_RELEASE} has no manage.py"
    return tree


def command_env(database_url: str, tree: Path) -> dict:
    env = {key: value for key, value in os.environ.items()
           if key not in {"CELERY_BROKER_URL", "DATABASE_URL", "PYTHONPATH", "DJANGO_SETTINGS_MODULE"}}
    env.update(DATABASE_URL=database_url, DEBUG="1", SECRET_KEY="upgrade-test-secret-key", PYTHONPATH=str(tree),
               API_TOKEN_PEPPERS=PEPPER,
               PYTHONDONTWRITEBYTECODE="1", LOG_LEVEL="WARNING", RUN_TREE_FORBIDDEN_ROOT=str(REPO_ROOT))
    return env


def run(args: list, *, cwd: Path, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(str(arg) for arg in args[1:])} (in {cwd}) exited {result.returncode}\n"
                    f"--- stdout (end)\n{result.stdout[-3000:]}\n--- stderr (end)\n{result.stderr[-5000:]}",
                    pytrace=False)
    return result


def old_manage(tree: Path, database_url: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """The previous release's manage.py, with the previous release's code only."""
    return run([sys.executable, str(RUN_TREE), str(tree), *args], cwd=tree, env=command_env(database_url, tree),
               check=check)


def new_manage(database_url: str, *args: str, check: bool = True, **env) -> subprocess.CompletedProcess:
    """The current checkout's manage.py (``env``: more of its environment)."""
    return run([sys.executable, "manage.py", *args], cwd=REPO_ROOT,
               env={**command_env(database_url, REPO_ROOT), **env}, check=check)


def last_json(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def test_upgrade_from_previous_release_keeps_every_row(previous_release, upgrade_database):
    tree, url = previous_release, upgrade_database

    # The previous release's code, and none of the current checkout's, runs in its subprocesses.
    where = last_json(old_manage(tree, url, "shell", "-c", WHERE_FROM).stdout)
    venv = Path(sys.prefix).resolve()  # may well sit inside the checkout (.venv)
    local = [path for path in where["modules"] + where["apps"]
             if Path(path).resolve().is_relative_to(REPO_ROOT) and not Path(path).resolve().is_relative_to(venv)]
    assert not local, f"the previous release's subprocess loaded the current checkout: {local}"
    assert all(Path(path).resolve().is_relative_to(tree) for path in where["modules"]), where

    # A database as the previous release leaves it, with demo play in it.
    old_manage(tree, url, "migrate", "--noinput")
    old_manage(tree, url, "seed_demo", "--rounds", str(DEMO_ROUNDS))
    old_manage(tree, url, "shell", "-c", ADDITIONS)
    old_manage(tree, url, "audit_verify")
    old_manage(tree, url, "rebuild_aggregates", "--check")
    smoke_before = last_json(old_manage(tree, url, "shell", "-c", SMOKE).stdout)

    before = snapshot.take(url)
    empty = [table for table in MUST_HAVE_ROWS if not before.counts.get(table)]
    assert not empty, f"the previous release's demo data left these tables empty (or missing): {empty}"
    kinds = [kind for kind in LEDGER_KINDS if not before.ledger_kinds[kind]]
    assert not kinds, f"no ledger entries of these kinds (sign) before the upgrade: {kinds} ({before.ledger_kinds})"
    assert not smoke_before["mismatches"], smoke_before
    with snapshot.connect(url) as conn:
        applied_before = set(conn.execute("SELECT app, name FROM django_migrations").fetchall())
        old_tokens = [key for (key,) in conn.execute("SELECT key FROM authtoken_token ORDER BY key").fetchall()]
    for migration in sorted(tree.glob("*/migrations/0*.py")):
        assert (migration.parent.parent.name, migration.stem) in applied_before, f"{migration} not applied"

    # The upgrade, by the current checkout.
    new_manage(url, "migrate", "--noinput")
    unapplied = new_manage(url, "migrate", "--check", check=False)
    assert unapplied.returncode == 0, (
        f"migrate --check: migrations left unapplied\n{unapplied.stdout}{unapplied.stderr}")
    plan = new_manage(url, "showmigrations", "--plan").stdout
    assert "[ ]" not in plan, f"showmigrations --plan shows unapplied migrations:\n{plan}"

    after = snapshot.take(url, columns=before.columns)
    moved = {f"{app}.{model}": f"{after.content_types[id_][0]}.{model}"
             for id_, (app, model) in before.content_types.items()
             if id_ in after.content_types and after.content_types[id_][0] != app}
    print(f"content types moved by the upgrade: {moved or 'none'}")
    problems = snapshot.compare(before, after)
    assert not problems, "the upgrade lost or changed data:\n  " + "\n  ".join(problems)

    old_tokens_still_work(url, old_tokens)
    keys_and_effects_moved(url)

    # Against the heads the previous release published too (its head sink, as a deployment keeps it).
    sink = os.environ.get("AUDIT_HEAD_SINK_DIR") or str(tree / "audit-heads")
    new_manage(url, "audit_verify", "--heads", sink)
    new_manage(url, "rebuild_aggregates", "--check")

    # The current ORM reads the upgraded money: same bets and balances, each balance its ledger's sum.
    smoke_after = last_json(new_manage(url, "shell", "-c", SMOKE).stdout)
    assert not smoke_after["mismatches"], f"balances differ from their ledger's sums: {smoke_after['mismatches']}"
    assert smoke_after["orphan_entries"] == 0, smoke_after
    print(f"models (app.table) before: {smoke_before['apps']}; after: {smoke_after['apps']}")
    for key in ("bets", "audit_events", "balances"):
        assert smoke_after[key] == smoke_before[key], f"{key}: {smoke_before[key]} before, {smoke_after[key]} after"
    events_partitioned_by_month(url, before.counts["games_auditevent"], sink)
    bets_and_ledger_partitioned_by_month(url, before.counts)


# Rows of the first query missing from the second's, and the other way round.
BOTH_WAYS = """
    SELECT (SELECT count(*) FROM ({0} EXCEPT ALL {1}) AS missing), (SELECT count(*) FROM ({1} EXCEPT ALL {0}) AS extra)
"""


def keys_and_effects_moved(url: str) -> None:
    """Every bet's idempotency key is in its table of its own, and every money effect of a bet on the
    ledger in its own, exactly: the rules the bets' and the ledger's unique indexes held go on."""
    with snapshot.connect(url) as conn:
        bets = "SELECT client_id, idempotency_key, id FROM games_bet"
        keys = "SELECT client_id, idempotency_key, bet_id FROM games_betkey"
        assert conn.execute(BOTH_WAYS.format(bets, keys)).fetchone() == (0, 0)
        entries = "SELECT bet_id, kind FROM settlement_ledgerentry WHERE bet_id IS NOT NULL"
        effects = "SELECT bet_id, kind FROM wallet_ledgereffect"
        assert conn.execute(BOTH_WAYS.format(entries, effects)).fetchone() == (0, 0)


# Run by the current checkout: an event after the upgrade, sequenced, and a head signed over it.
NEW_EVENT = """
from audit.services import audit_head_sign, audit_record
event = audit_record(actor="system:upgrade-test", action="test.event", object_type="test", object_id="1")
print(event.pk, audit_head_sign().tree_size)
"""


def events_partitioned_by_month(url: str, events_before: int, sink: str) -> None:
    """The audit events are partitioned by month: every event of the previous release in the legacy
    partition, a new one in this month's, and the log verifying over both."""
    with snapshot.connect(url) as conn:
        assert conn.execute("SELECT relkind FROM pg_class WHERE relname = 'games_auditevent'").fetchone() == ("p",)
        assert conn.execute("SELECT count(*) FROM games_auditevent_legacy").fetchone() == (events_before,)
    event_id, _size = new_manage(url, "shell", "-c", NEW_EVENT).stdout.split()[-2:]
    with snapshot.connect(url) as conn:
        [(partition,)] = conn.execute("SELECT tableoid::regclass::text FROM games_auditevent WHERE id = %s",
                                      [int(event_id)]).fetchall()
    assert partition.startswith("games_auditevent_p"), partition
    assert "OK:" in new_manage(url, "audit_verify", "--heads", sink).stdout


def bets_and_ledger_partitioned_by_month(url: str, counts: dict) -> None:
    """The bets and the ledger are partitioned by month: every row of the previous release in the
    legacy partition, this month and two more ahead, the ledger's foreign key to the bets valid on
    the partitioned tables, and a bet placed now in this month's partition."""
    with snapshot.connect(url) as conn:
        for table in ("games_bet", "settlement_ledgerentry"):
            assert conn.execute("SELECT relkind FROM pg_class WHERE relname = %s", [table]).fetchone() == ("p",)
            assert conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
                sql.Identifier(f"{table}_legacy"))).fetchone() == (counts[table],)
            months = conn.execute("SELECT count(*) FROM pg_inherits WHERE inhparent = %s::regclass "
                                  "AND inhrelid::regclass::text LIKE %s", [table, f"{table}_p%"]).fetchone()[0]
            assert months >= 3, f"{table}: {months} monthly partitions"
        assert conn.execute(
            "SELECT convalidated FROM pg_constraint WHERE conrelid = 'settlement_ledgerentry'::regclass "
            "AND confrelid = 'games_bet'::regclass AND contype = 'f' AND conparentid = 0").fetchall() == [(True,)]
        [(partition,)] = conn.execute(
            "INSERT INTO games_bet (round_id, account_id, client_id, bet_type, stake, multiplier, idempotency_key, "
            "status, placed_at, hold_reason) SELECT round_id, account_id, client_id, bet_type, stake, multiplier, "
            "'upgrade-test-new-bet', 'PENDING', now(), '' FROM games_bet LIMIT 1 "
            "RETURNING tableoid::regclass::text").fetchall()
        assert partition == f"games_bet_p{conn.execute('SELECT to_char(now(), %s)', ['YYYYMM']).fetchone()[0]}"
        conn.rollback()


def old_tokens_still_work(url: str, keys: list) -> None:
    """The previous release's clear-text tokens: kept as digests under the pepper of the upgrade's
    environment, none of them in clear anywhere, each still reading the API, also once that pepper
    has become the earlier of two (apitokens 0002, apitokens.digests)."""
    assert keys, "the previous release's demo made no API token"
    with snapshot.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('authtoken_token')").fetchone()[0] is None
        assert conn.execute("SELECT count(*) FROM apitokens_apitoken").fetchone()[0] == len(keys)
        for table in snapshot.tables(conn.cursor()):
            found = conn.execute(sql.SQL("SELECT count(*) FROM {} t WHERE t::text LIKE ANY(%s)").format(
                sql.Identifier(table)), [[f"%{key}%" for key in keys]]).fetchone()[0]
            assert found == 0, f"{table} holds a previous release's token in clear"
    tokens = json.dumps(keys)
    fresh = new_manage(url, "shell", "-c", TOKENS_READ, UPGRADE_TEST_TOKENS=tokens)
    assert last_json(fresh.stdout) == [200] * len(keys)
    rotated = new_manage(url, "shell", "-c", TOKENS_READ, UPGRADE_TEST_TOKENS=tokens,
                         API_TOKEN_PEPPERS=f"{NEXT_PEPPER},{PEPPER}")
    assert last_json(rotated.stdout) == [200] * len(keys)
