"""The audit trail's hash chain: audit_verify detects an altered, a deleted and an inserted event."""

import json
from contextlib import contextmanager
from itertools import pairwise

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction

from audit.chain import GENESIS_HASH
from audit.models import AuditEvent
from audit.selectors import audit_chain_check, audit_head
from audit.services import audit_record
from games import services

pytestmark = pytest.mark.django_db


@contextmanager
def triggers_bypassed():
    """What an attacker with database access could do: write around the append-only triggers."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET session_replication_role = replica")
            try:
                yield cursor
            finally:
                cursor.execute("SET session_replication_role = DEFAULT")
        else:
            cursor.execute("DROP TRIGGER games_auditevent_append_only")
            yield cursor


@pytest.fixture
def history(game, operator, integration):
    for multiplier in ("8.5", "8.0", "7.5"):
        services.game_update(game_id=game.pk, actor=operator, reason="tuning", changes={"tie_multiplier": multiplier})
    services.round_open(game_id=game.pk, actor=integration)
    return list(AuditEvent.objects.order_by("id"))


def verify() -> dict:
    try:
        call_command("audit_verify", "--json", stdout=(out := _Buffer()))
    except CommandError as error:
        return {"ok": False, "error": str(error), **json.loads(out.text)}
    return json.loads(out.text)


class _Buffer:
    def __init__(self):
        self.text = ""

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_intact_chain_is_confirmed_with_its_head(history):
    result = verify()
    assert result["ok"] is True
    assert result["events"] == len(history)
    assert result["head_hash"] == history[-1].hash == audit_head()["hash"]
    assert history[0].prev_hash == GENESIS_HASH
    assert all(later.prev_hash == earlier.hash for earlier, later in pairwise(history))


def test_an_altered_event_is_named(history):
    target = history[2]
    with triggers_bypassed() as cursor:
        cursor.execute("UPDATE games_auditevent SET reason = %s WHERE id = %s", ["nothing to see", target.pk])
    result = verify()
    assert result["ok"] is False
    assert f"event {target.pk}" in result["problem"] and "altered" in result["problem"]
    assert result["checked"] == 2


def test_a_deleted_event_is_named(history):
    target = history[2]
    with triggers_bypassed() as cursor:
        cursor.execute("DELETE FROM games_auditevent WHERE id = %s", [target.pk])
    result = verify()
    assert result["ok"] is False
    assert f"event {history[3].pk}" in result["problem"] and "deleted or inserted" in result["problem"]


def test_an_inserted_event_is_named(history):
    forged = AuditEvent(**{f.attname: getattr(history[1], f.attname) for f in AuditEvent._meta.concrete_fields
                           if f.attname not in ("id", "hash", "prev_hash")})
    forged.reason = "forged"
    forged.prev_hash = "e" * 64  # whatever link it claims cannot match the chain
    forged.hash = "f" * 64
    forged.id = history[-1].pk + 100
    forged.save(force_insert=True)
    result = verify()
    assert result["ok"] is False
    assert f"event {forged.pk}" in result["problem"]


def test_updates_are_refused_by_the_database(history):
    with pytest.raises(IntegrityError), transaction.atomic():
        AuditEvent.objects.filter(pk=history[0].pk).update(reason="rewritten")
    assert audit_chain_check()[2] is None


def test_an_event_outside_any_transaction_still_chains(db):
    first = audit_record(actor="system:test", action="test.one", object_type="x", object_id="1")
    second = audit_record(actor="system:test", action="test.two", object_type="x", object_id="2")
    assert second.prev_hash == first.hash
    assert audit_chain_check() == (2, second.hash, None)


def test_staff_changes_and_failed_logins_are_audited(client, operator):
    assert AuditEvent.objects.filter(action="staff.created", object_id=str(operator.pk)).exists()
    roles = AuditEvent.objects.filter(action="staff.roles_changed", object_id=str(operator.pk)).last()
    assert roles.after == {"groups": ["Operators"], "change": "add"}
    operator.is_active = False
    operator.save()
    changed = AuditEvent.objects.get(action="staff.changed", object_id=str(operator.pk))
    assert (changed.before["is_active"], changed.after["is_active"]) == (True, False)
    response = client.post("/admin/login/", {"username": "mallory", "password": "guess-123"})
    assert response.status_code == 200
    failed = AuditEvent.objects.get(action="auth.login_failed")
    assert failed.object_id == "mallory"
    assert "guess-123" not in repr(failed.__dict__)
    assert audit_chain_check()[2] is None
