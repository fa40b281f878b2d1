"""manage.py create_staff_user: a user in one role, its group, its API token on the last line."""

import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from apitokens.models import ApiToken
from audit.models import AuditEvent
from backoffice.roles import Role
from tests.apitokens.helpers import token_of

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-enough-pass-phrase"


def run(*args, **options) -> list:
    out = StringIO()
    call_command("create_staff_user", *args, stdout=out, **options)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("role, staff, superuser", [
    ("operator", True, False),
    ("support", True, False),
    ("admin", True, True),
    ("integration", False, False),
    ("regulator", True, False),
])
def test_creates_the_user_in_its_group_and_prints_the_token_last(role, staff, superuser):
    lines = run("newbie", role=role, password=PASSWORD)

    user = User.objects.get(username="newbie")
    assert (user.is_staff, user.is_superuser) == (staff, superuser)
    assert list(user.groups.values_list("name", flat=True)) == [Role(role).group_name]
    assert user.check_password(PASSWORD)
    token = ApiToken.objects.get(owner=user)
    assert token_of(lines[-1]) == token  # the last line, alone, is the token the database knows by its digest
    assert len(lines[-1].split()) == 1 and lines[-1] not in str(list(ApiToken.objects.values()))
    assert token.scopes == (["read"] if role in ("support", "regulator") else ["write"])
    assert (token.expires_at is None) == (not staff)  # a staff member's token expires, a game server's not


def test_records_a_staff_created_audit_event():
    run("newbie", role="operator", password=PASSWORD)

    event = AuditEvent.objects.get(action="staff.created")
    user = User.objects.get(username="newbie")
    assert (event.actor, event.actor_user, event.object_type, event.object_id) == (
        "system:create_staff_user", None, "user", str(user.pk))
    assert event.after["username"] == "newbie" and event.after["is_staff"] is True
    roles = AuditEvent.objects.get(action="staff.roles_changed", object_id=str(user.pk))
    assert (roles.actor, roles.after["groups"]) == ("system:create_staff_user", ["Operators"])
    assert PASSWORD not in str(event.after) + str(roles.after)


def test_the_role_grants_its_permissions():
    run("op", role="operator", password=PASSWORD)
    run("sup", role="support", password=PASSWORD)

    assert User.objects.get(username="op").has_perm("games.change_gameinstance")
    assert User.objects.get(username="op").has_perm("games.rotate_seeds")
    assert not User.objects.get(username="sup").has_perm("games.change_gameinstance")
    assert User.objects.get(username="sup").has_perm("games.view_round")


def test_prompts_for_the_password_twice(monkeypatch):
    answers = iter([PASSWORD, PASSWORD])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))

    lines = run("prompted", role="support")

    assert User.objects.get(username="prompted").check_password(PASSWORD)
    assert token_of(lines[-1]).owner.username == "prompted"


def test_passwords_that_differ_are_refused(monkeypatch):
    answers = iter([PASSWORD, PASSWORD + "x"])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))

    with pytest.raises(CommandError, match="do not match"):
        run("prompted", role="support")
    assert not User.objects.filter(username="prompted").exists()


def test_no_password_and_no_terminal_is_refused(monkeypatch):
    def no_input(prompt=""):
        raise EOFError

    monkeypatch.setattr("getpass.getpass", no_input)

    with pytest.raises(CommandError, match="--password"):
        run("prompted", role="support")


@pytest.mark.parametrize("password, message", [("short", "too short"), ("password123", "too common"), ("", "empty")])
def test_weak_passwords_are_refused_by_django_validation(password, message):
    with pytest.raises(CommandError, match=message):
        run("weak", role="operator", password=password)
    assert not User.objects.filter(username="weak").exists()


def test_an_existing_user_is_refused_and_nothing_changes():
    run("taken", role="support", password=PASSWORD)
    token = ApiToken.objects.get(owner__username="taken")

    with pytest.raises(CommandError, match="already exists"):
        run("taken", role="admin", password=PASSWORD)

    user = User.objects.get(username="taken")
    assert not user.is_superuser and list(ApiToken.objects.filter(owner=user)) == [token]
    assert AuditEvent.objects.filter(action="staff.created", actor="system:create_staff_user").count() == 1


def test_a_bad_role_is_refused():
    with pytest.raises(CommandError, match="invalid choice"):
        run("someone", role="croupier", password=PASSWORD)
    assert not User.objects.filter(username="someone").exists()


def test_a_bad_username_is_refused():
    with pytest.raises(CommandError, match="username"):
        run("not a valid name!", role="support", password=PASSWORD)


def test_errors_exit_non_zero_from_the_command_line():
    manage = Path(__file__).resolve().parents[3] / "manage.py"
    result = subprocess.run(
        [sys.executable, str(manage), "create_staff_user", "someone", "--role", "croupier", "--password", PASSWORD],
        capture_output=True, text=True, env={"DEBUG": "1", "PATH": "/usr/bin:/bin"}, timeout=60,
    )

    assert result.returncode != 0
    assert "invalid choice: 'croupier'" in result.stderr


def test_the_scopes_can_be_narrowed_and_a_bad_scope_changes_nothing():
    lines = run("table", role="integration", password=PASSWORD, scopes="read,bets")
    assert token_of(lines[-1]).scopes == ["read", "bets"]
    with pytest.raises(CommandError, match="unknown: deal"):
        run("table-2", role="integration", password=PASSWORD, scopes="read,deal")
    assert not User.objects.filter(username="table-2").exists()
