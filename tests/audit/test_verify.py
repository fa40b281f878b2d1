"""Signed heads, audit_head and audit_verify, against an insider with the database's superuser rights."""

import base64
import json
from contextlib import contextmanager
from io import StringIO

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction

from alerts import checks as alert_checks
from audit import heads
from audit.models import AuditEvent, AuditHead, AuditLeaf, AuditNode, AuditSequencerState
from audit.services import audit_head_sign, audit_record, audit_sequence
from games import services

pytestmark = pytest.mark.django_db


@contextmanager
def as_insider():
    """What an attacker with the database's superuser rights can do: write around the triggers
    (and the foreign keys). The test must run as the owner (``owner`` marker): the application's
    role may not even try."""
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        try:
            yield cursor
        finally:
            cursor.execute("SET session_replication_role = DEFAULT")


@pytest.fixture
def log(game, operator, integration, settings, tmp_path):
    """Some history, sequenced, with a head signed and saved outside the database."""
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    for multiplier in ("8.5", "8.0", "7.5"):
        services.game_update(game_id=game.pk, actor=operator, reason="tuning", changes={"tie_multiplier": multiplier})
    services.round_open(game_id=game.pk, actor=integration)
    out = StringIO()
    call_command("audit_head", stdout=out)
    saved = tmp_path / "head.json"
    saved.write_text(out.getvalue())
    return list(AuditEvent.objects.filter(leaf__isnull=False).order_by("leaf__index")), saved


def verify(*args) -> str:
    out = StringIO()
    try:
        call_command("audit_verify", *args, stdout=out)
    except CommandError as error:
        assert error.returncode == 1
        return str(error)
    return out.getvalue()


def test_audit_head_prints_one_signed_json_line_and_publishes_it(log, audit_head_sink):
    events, saved = log
    line = saved.read_text()
    head = json.loads(line)
    assert list(head) == ["tree_size", "root_hash", "timestamp", "signature", "key_id"]
    assert line.count("\n") <= 1 and head["tree_size"] == len(events) == AuditLeaf.objects.count()
    assert heads.signature_holds(head, heads.public_key_bytes())
    assert [json.loads(p.read_text()) for p in audit_head_sink.iterdir()] == [head]
    call_command("audit_head", stdout=(again := StringIO()))
    assert json.loads(again.getvalue()) == head  # a head already covers the log: no new one
    assert AuditHead.objects.count() == 1


def test_an_intact_log_verifies_alone_and_against_a_saved_head(log):
    events, saved = log
    audit_record(actor="system:test", action="test.later", object_type="x", object_id="1")
    audit_sequence()
    assert verify().startswith(f"OK: {len(events) + 1} events in the log")
    assert "consistent with the head given" in verify("--against", str(saved))


@pytest.mark.owner
def test_an_altered_event_is_named(log):
    events, saved = log
    with as_insider() as cursor:
        cursor.execute("UPDATE games_auditevent SET reason = %s WHERE id = %s", ["nothing to see", events[2].pk])
    assert f"altered event: event {events[2].pk} at leaf 2" in verify()
    assert "altered event" in verify("--against", str(saved))


@pytest.mark.owner
def test_a_deleted_event_is_named(log):
    events, saved = log
    with as_insider() as cursor:
        cursor.execute("DELETE FROM audit_auditleaf WHERE event_id = %s", [events[2].pk])
        cursor.execute("DELETE FROM games_auditevent WHERE id = %s", [events[2].pk])
    assert "missing event: leaf 2 is gone" in verify()


@pytest.mark.owner
def test_a_reordered_event_is_named(log):
    events, _saved = log
    with as_insider() as cursor:
        cursor.execute('UPDATE audit_auditleaf SET event_id = -event_id WHERE "index" IN (1, 2)')
        cursor.execute("UPDATE audit_auditleaf SET event_id = %s WHERE \"index\" = 1", [events[2].pk])
        cursor.execute("UPDATE audit_auditleaf SET event_id = %s WHERE \"index\" = 2", [events[1].pk])
    assert f"reordered event: event {events[2].pk} at leaf 1 was sequenced at leaf 2" in verify()


def test_an_inserted_event_is_named(log):
    events, _saved = log
    forged = AuditEvent(**{f.attname: getattr(events[1], f.attname) for f in AuditEvent._meta.concrete_fields
                           if f.attname not in ("id", "xact_id")}, id=0, xact_id=None)
    forged.reason = "backdated"
    forged.save(force_insert=True)
    assert "inserted event: event 0" in verify()


@pytest.mark.owner
def test_a_bad_signature_is_named(log):
    with as_insider() as cursor:
        cursor.execute("UPDATE audit_audithead SET timestamp = timestamp + 1")
    assert "bad signature: the stored head of tree size" in verify()


@pytest.mark.owner
def test_a_truncated_tail_is_caught_by_a_saved_head(log):
    events, saved = log
    with as_insider() as cursor:  # the last two events go, with their leaves, nodes and heads
        size = len(events) - 2
        cursor.execute("DELETE FROM audit_audithead")
        cursor.execute("DELETE FROM audit_auditleaf WHERE \"index\" >= %s", [size])
        cursor.execute("DELETE FROM games_auditevent WHERE id IN (%s, %s)", [events[-1].pk, events[-2].pk])
        cursor.execute("UPDATE audit_auditsequencerstate SET tree_size = %s", [size])
    assert AuditNode.objects.exists()
    assert verify("--no-published-heads").startswith("OK")  # nothing left in the database remembers the tail
    assert f"truncated log: the head given covers {len(events)} events, the log holds {size}" in verify(
        "--no-published-heads", "--against", str(saved))
    # The head published outside the database when it was signed does, and plain audit_verify reads it.
    assert f"truncated log: the published head head-{len(events):015d}-" in verify()


@pytest.mark.owner
def test_a_rewritten_tail_with_every_hash_recomputed_is_caught_by_a_saved_head(log):
    events, saved = log
    rewrite_from = len(events) - 2
    with as_insider() as cursor:
        cursor.execute("UPDATE games_auditevent SET reason = 'rewritten' WHERE id = %s", [events[-1].pk])
        cursor.execute("DELETE FROM audit_audithead")
        cursor.execute("DELETE FROM audit_auditleaf WHERE \"index\" >= %s", [rewrite_from])
        for node in AuditNode.objects.all():
            if (node.index + 1) << node.level > rewrite_from:
                cursor.execute("DELETE FROM audit_auditnode WHERE id = %s", [node.pk])
        cursor.execute("UPDATE audit_auditsequencerstate SET tree_size = %s, horizon = 0", [rewrite_from])
    audit_sequence()  # the project's own code recomputes every hash of the tail
    assert AuditLeaf.objects.count() == len(events)
    assert verify("--no-published-heads").startswith("OK")
    assert "rewritten log: its first" in verify("--no-published-heads", "--against", str(saved))
    # Plain audit_verify and the hourly check read the heads published when they were signed.
    problem = f"rewritten log: its first {len(events)} events no longer give the root of the published head"
    assert problem in verify()
    [finding] = alert_checks.audit_chain()
    assert problem in finding.message


def test_a_head_from_another_key_is_refused(log, tmp_path):
    _events, saved = log
    head = json.loads(saved.read_text())
    head["key_id"] = "a" * 64
    (forged := tmp_path / "forged.json").write_text(json.dumps(head))
    assert "bad signature: the head given" in verify("--against", str(forged))
    (broken := tmp_path / "broken.json").write_text("{not json")
    assert "cannot read the head" in verify("--against", str(broken))


@pytest.mark.owner  # the triggers hold even for the tables' owner (the application role may not try)
def test_the_database_refuses_to_change_leaves_nodes_and_heads(log):
    for statement in ("UPDATE audit_auditleaf SET hash = hash", "UPDATE audit_auditnode SET hash = hash",
                      "UPDATE audit_audithead SET timestamp = timestamp", "UPDATE games_auditevent SET reason = ''"):
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)
    assert verify().startswith("OK")
    assert AuditSequencerState.objects.get().tree_size == AuditLeaf.objects.count()


def test_the_log_is_signed_outside_any_head_when_empty(db):
    head = audit_head_sign()
    assert head.tree_size == AuditLeaf.objects.count()
    assert verify().startswith("OK")


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


def public_key_only(settings, key: str | None = None):
    """An auditor's settings: no signing key anywhere, the public key alone (when given)."""
    settings.AUDIT_SIGNING_KEY, settings.AUDIT_SIGNING_KEY_FILE = "", ""
    settings.AUDIT_PUBLIC_KEY = key or ""


def test_audit_verify_needs_only_the_public_key(log, settings):
    """Before, it read the private signing key and raised ImproperlyConfigured without it."""
    _events, saved = log
    public = heads.public_key_b64()
    public_key_only(settings, public)
    assert verify().startswith("OK")
    assert "consistent with the head given" in verify("--against", str(saved))
    public_key_only(settings)
    assert verify("--public-key", public).startswith("OK")
    other = base64.b64encode(Ed25519PrivateKey.generate().public_key().public_bytes_raw()).decode()
    assert "bad signature: the stored head" in verify("--public-key", other)
    with pytest.raises(CommandError, match="cannot verify: Set AUDIT_PUBLIC_KEY") as missing:
        call_command("audit_verify", stdout=StringIO())
    assert missing.value.returncode == 2
    with pytest.raises(CommandError, match="cannot verify: an Ed25519 public key is base64") as bad:
        call_command("audit_verify", "--public-key", "not-a-key", stdout=StringIO())
    assert bad.value.returncode == 2


def test_a_signing_key_that_is_not_the_public_keys_signs_nothing(db, settings):
    settings.AUDIT_PUBLIC_KEY = base64.b64encode(Ed25519PrivateKey.generate().public_key().public_bytes_raw()).decode()
    with pytest.raises(ImproperlyConfigured, match="AUDIT_PUBLIC_KEY"):
        audit_head_sign()
    assert not AuditHead.objects.exists()


def test_a_forged_or_unreadable_published_head_is_named(log, audit_head_sink):
    _events, saved = log
    head = json.loads(saved.read_text())
    (audit_head_sink / "head-000000000000001-1.json").write_text(json.dumps({**head, "tree_size": 1}))
    assert "bad signature: the published head head-000000000000001-1.json" in verify()
    (audit_head_sink / "head-000000000000001-1.json").write_text("{not json")
    assert "unreadable published head" in verify()
    assert verify("--no-published-heads").startswith("OK")
