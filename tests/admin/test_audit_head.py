"""The head of the audit hash chain in the admin: shown above the audit trail, and offered as JSON to be
published outside the database."""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from audit.models import AuditEvent
from games import services as game_services
from tests.admin.helpers import admin_url

pytestmark = pytest.mark.django_db

HEAD = reverse("admin:audit_auditevent_head")


def test_the_audit_trail_shows_its_head_hash(as_support, game):
    newest = AuditEvent.objects.order_by("-id").first()

    page = as_support.get(admin_url(AuditEvent))

    content = page.content.decode()
    assert page.status_code == 200
    assert f'<code class="pf-head-hash">{newest.hash}</code>' in content
    assert admin_url(newest, "change") in content
    assert HEAD in content


def test_the_head_json_is_what_audit_verify_confirms(as_support, operator, game, capsys):
    game_services.game_update(game_id=game.pk, actor=operator, reason="before publishing",
                              changes={"tie_multiplier": "8.0"})

    response = as_support.get(HEAD)

    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    head = response.json()
    newest = AuditEvent.objects.order_by("-id").first()
    assert (head["head_id"], head["head_hash"]) == (newest.pk, newest.hash)
    assert head["head_created_at"] and head["taken_at"]
    assert "Content-Disposition" not in response
    call_command("audit_verify", "--json")
    verified = json.loads(capsys.readouterr().out)
    assert verified["ok"] and (verified["head_id"], verified["head_hash"]) == (head["head_id"], head["head_hash"])


def test_the_head_downloads_as_a_file(as_support, game):
    newest = AuditEvent.objects.order_by("-id").first()

    response = as_support.get(HEAD, {"download": "1"})

    assert response["Content-Disposition"] == f'attachment; filename="audit-head-{newest.pk}.json"'
    assert json.loads(response.content)["head_hash"] == newest.hash
    page = as_support.get(admin_url(AuditEvent)).content.decode()
    assert f"{HEAD}?download=1" in page


def test_the_head_follows_new_events(as_support, operator, game):
    first = as_support.get(HEAD).json()

    game_services.seed_rotate(game_id=game.pk, actor=operator)

    second = as_support.get(HEAD).json()
    assert second["head_id"] > first["head_id"] and second["head_hash"] != first["head_hash"]
    assert AuditEvent.objects.get(pk=second["head_id"]).hash == second["head_hash"]


def test_the_head_needs_the_audit_view_permission(client, integration, nobody, game):
    nobody.is_staff = True
    nobody.save()
    client.force_login(nobody)
    assert client.get(HEAD).status_code == 403

    client.force_login(integration)
    response = client.get(HEAD)
    assert response.status_code == 302 and reverse("admin:login") in response["Location"]


def test_the_index_offers_the_support_tools(as_support, as_operator):
    for staff in (as_support, as_operator):
        page = staff.get(reverse("admin:index")).content.decode()
        assert 'id="support-tools"' in page
        assert reverse("admin:games_round_recall") in page and HEAD in page
