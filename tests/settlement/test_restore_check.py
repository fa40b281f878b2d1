"""The restore drill (manage.py restore_check, run as an operator runs it: a process of its own): a
backup of the test database restored into a fresh database on the same server and proved; and the
checks fail where the backup does not hold.

The fresh database is TEST_RESTORE_DATABASE (default: the test database's name + _restore_check),
made and dropped by each test."""

import os
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from audit.services import audit_head_sign
from dbutils import backup
from dbutils.postgresql import urls
from games import services as game_services
from tests import app_role
from wallet.models import Account

pytestmark = pytest.mark.django_db(transaction=True)
MANAGE = Path(__file__).resolve().parents[2] / "manage.py"


@pytest.fixture
def owner_url():
    return urls.to_url(app_role.owner_settings())


@pytest.fixture
def target():
    name = os.environ.get("TEST_RESTORE_DATABASE") or f"{connection.settings_dict['NAME']}_restore_check"
    yield name
    backup.drop_database(app_role.owner_settings(), name)


def play(game, integration, funded_account, rounds: int = 5) -> None:
    """Rounds with bets, dealt and settled (tasks run in-process), and a signed head published."""
    for external_id in ("p1", "p2"):
        if not Account.objects.filter(external_id=external_id).exists():
            funded_account(external_id, "300.00")
    for _ in range(rounds):
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        for key, (account, bet_type) in enumerate((("p1", "PLAYER"), ("p2", "BANKER"), ("p2", "TIE"))):
            game_services.bet_place(round_id=round_.pk, account_external_id=account, bet_type=bet_type,
                                    stake=Decimal("3.00"), idempotency_key=f"{round_.pk}-{key}", client=integration)
        game_services.round_deal(round_id=round_.pk, actor=integration)
    audit_head_sign()


def run(*args, ok: bool = True) -> str:
    """restore_check's output; it exits 0 (``ok``) or 1."""
    done = subprocess.run([sys.executable, str(MANAGE), "restore_check", *args], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == (0 if ok else 1), done.stdout + done.stderr
    return done.stdout + done.stderr


def test_a_fresh_backup_restores_and_proves_itself(game, integration, funded_account, owner_url, target,
                                                   audit_head_sink):
    play(game, integration, funded_account)
    said = run(f"--database-url={owner_url}", f"--target={target}", f"--heads={audit_head_sink}")
    print(said)
    for check in ("migrations current", "every balance equals its ledger", "aggregates rebuild equal",
                  "audit_verify --against head-"):
        assert re.search(rf"^ok   {re.escape(check)}", said, re.MULTILINE), said
    assert re.search(r"^dump: [0-9.]+ s", said, re.MULTILINE) and re.search(r"^restore: [0-9.]+ s", said, re.MULTILINE)
    assert "restore_check: passed" in said
    assert not backup.database_exists(app_role.owner_settings(), target), "dropped after the drill"


def test_events_published_after_the_backup_fail_the_audit_check(game, integration, funded_account, owner_url,
                                                                target, audit_head_sink, tmp_path):
    play(game, integration, funded_account, rounds=2)
    params = app_role.owner_settings()
    archive = tmp_path / "older.dump"
    backup.dump(params, archive, backup.tools_dir(backup.server_major(params)))
    play(game, integration, funded_account, rounds=1)  # after the backup: a head the backup cannot reach
    said = run(f"--database-url={owner_url}", f"--target={target}", f"--heads={audit_head_sink}",
               f"--dump={archive}", ok=False)
    assert re.search(r"^FAIL audit_verify --against head-", said, re.MULTILINE), said
    assert re.search(r"^ok   every balance equals its ledger", said, re.MULTILINE), said


def test_a_balance_off_its_ledger_fails_the_drill(game, integration, funded_account, owner_url, target,
                                                  audit_head_sink):
    play(game, integration, funded_account, rounds=1)
    with psycopg.connect(**urls.conninfo(app_role.owner_settings()), autocommit=True) as owner:
        owner.execute("UPDATE settlement_account SET balance = balance + 1 WHERE external_id = 'p1'")
    said = run(f"--database-url={owner_url}", f"--target={target}", f"--heads={audit_head_sink}", ok=False)
    assert "FAIL every balance equals its ledger: 2 accounts; off their ledger: [('p1'" in said


def test_the_target_must_be_fresh(owner_url, target):
    backup.create_database(app_role.owner_settings(), target)
    assert f"the database {target} exists" in run(f"--database-url={owner_url}", f"--target={target}", ok=False)
