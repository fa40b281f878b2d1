"""The regulator in the admin: every list and record read-only, recall, exports, the dashboard and
the audit head open; every change refused with a 403 that names the permission."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from audit.models import AuditEvent
from games.models import Bet, GameInstance, Round
from settlement.models import SettlementBatch
from tests.admin.helpers import admin_url, snapshot
from tests.conftest import log_in_through_pages
from wallet.models import Account, LedgerEntry

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(play, player):
    play(bets=[(player, "BANKER", "10.00")])
    return play(bets=[(player, "PLAYER", "5.00")], deal=False)


@pytest.mark.parametrize("model", [GameInstance, Round, Bet, AuditEvent, Account, LedgerEntry, SettlementBatch, User])
def test_every_list_and_record_is_read_only(as_regulator, played, regulator, model):
    assert as_regulator.get(admin_url(model)).status_code == 200
    obj = model.objects.order_by("pk").first()
    page = as_regulator.get(admin_url(obj, "change"))
    assert page.status_code == 200
    assert page.context["has_change_permission"] is False
    assert b'name="_save"' not in page.content
    before = snapshot()
    assert as_regulator.post(admin_url(obj, "change"), {"name": "changed", "reason": "r"}).status_code == 403
    assert snapshot() == before


def test_recall_exports_the_dashboard_and_the_audit_head_open(as_regulator, played):
    for url in (reverse("admin:games_round_recall") + "?game=main-table",
                reverse("admin:games_round_recall_export") + "?game=main-table",
                reverse("admin:games_round_export"), reverse("admin:audit_auditevent_export"),
                reverse("admin:audit_auditevent_head"), "/admin/dashboard/"):
        assert as_regulator.get(url).status_code == 200, url


@pytest.mark.parametrize("target, permission", [
    (lambda r, a: admin_url(GameInstance, "add"), "games.add_gameinstance"),
    (lambda r, a: admin_url(r.game, "rotate_seed"), "games.rotate_seeds"),
    (lambda r, a: admin_url(r, "void"), "games.void_round"),
    (lambda r, a: admin_url(a, "adjust"), "wallet.adjust_account"),
    (lambda r, a: admin_url(SettlementBatch, "sweep"), "settlement.request_sweep"),
    (lambda r, a: admin_url(User, "add"), "auth.add_user"),
    (lambda r, a: reverse("admin:auth_user_password_change", args=[User.objects.get(username="olivia-operator").pk]),
     "auth.change_user"),
])
def test_every_change_is_refused_naming_its_permission(as_regulator, played, player, target, permission):
    url = target(played, player)
    before = snapshot()
    for response in (as_regulator.get(url), as_regulator.post(url, {"reason": "r", "amount": "5.00"})):
        assert response.status_code == 403, url
        assert f"<code>{permission}</code>" in response.content.decode(), url
    assert snapshot() == before


def test_no_bulk_action_is_offered_or_runs(as_regulator, played):
    page = as_regulator.get(admin_url(GameInstance))
    form = page.context["action_form"]
    assert form is None or "rotate_seeds" not in str(form.fields["action"].choices)
    before = snapshot()
    as_regulator.post(admin_url(GameInstance), {"action": "rotate_seeds", "_selected_action": [played.game.pk],
                                                "index": "0"})
    assert snapshot() == before


def test_the_regulator_signs_in_to_the_admin(client, regulator):
    log_in_through_pages(client, regulator)  # the password, then the code
    index = client.get(reverse("admin:index"))
    models = {model["object_name"] for app in index.context["app_list"] for model in app["models"]}
    assert {"GameInstance", "Round", "Bet", "AuditEvent", "Account", "LedgerEntry", "User"} <= models
