"""The latest signed tree head in the admin: shown above the audit trail, and offered as the JSON line
``audit_head`` prints, to be kept outside the database."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from audit.models import AuditEvent
from audit.services import audit_head_sign
from games import services as game_services
from tests.admin.helpers import admin_url
from tests.conftest import verified_login

pytestmark = pytest.mark.django_db

HEAD = reverse("admin:audit_auditevent_head")


def test_the_audit_trail_shows_its_signed_head_and_pending_events(as_support, operator, game):
    head = audit_head_sign()
    game_services.game_update(game_id=game.pk, actor=operator, reason="after the head",
                              changes={"tie_multiplier": "8.0"})

    page = as_support.get(admin_url(AuditEvent))

    content = page.content.decode()
    assert page.status_code == 200
    assert f'<code class="pf-head-hash">{head.root_hash}</code>' in content
    assert "1 pending" in content and HEAD in content
    assert [row.leaf_index for row in page.context["cl"].result_list][0] is None  # the newest is pending


def test_the_head_json_is_what_audit_verify_checks_against(as_support, game, tmp_path):
    response = as_support.get(HEAD)  # signed on demand

    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    (saved := tmp_path / "head.json").write_bytes(response.content)
    call_command("audit_verify", "--against", str(saved), stdout=(out := StringIO()))
    assert "consistent with the head given" in out.getvalue()
    download = as_support.get(HEAD, {"download": "1"})
    assert download["Content-Disposition"] == f'attachment; filename="audit-head-{response.json()["tree_size"]}.json"'
    assert json.loads(download.content) == response.json() == audit_head_sign().as_json()


def test_the_head_needs_the_audit_view_permission(client, integration, nobody, game):
    nobody.is_staff = True
    nobody.save()
    verified_login(client, nobody)
    assert client.get(HEAD).status_code == 403

    client.force_login(integration)
    response = client.get(HEAD)
    assert response.status_code == 302 and reverse("admin:login") in response["Location"]


def test_the_index_offers_the_support_tools(as_support, as_operator):
    for staff in (as_support, as_operator):
        page = staff.get(reverse("admin:index")).content.decode()
        assert 'id="support-tools"' in page
        assert reverse("admin:games_round_recall") in page and HEAD in page
