"""Webhook endpoints in the admin browser: the URL rule is stated beside the field, a URL it refuses
is answered on the form, and a good one is saved with its secret shown once. An approver who lacks
the permission of the action is refused with the reason."""

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import expect

from approvals.models import Approval
from approvals.services import approval_gate
from tests.browser.conftest import PASSWORD
from wallet import services as wallet_services
from webhooks.models import Endpoint

pytestmark = pytest.mark.browser


def test_an_administrator_registers_an_endpoint_under_the_url_rule(page, live_server, sign_in, shot, administrator,
                                                                   integration, settings):
    settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_BLOCK_PRIVATE = False, True
    sign_in(page, administrator)
    page.goto(f"{live_server.url}/admin/webhooks/endpoint/add/")
    expect(page.locator(".field-url")).to_contain_text("no user or password, no #fragment")
    page.locator("#id_owner").select_option(label=str(integration))
    page.locator("#id_url").fill("http://user:pw@10.0.0.7/hook#top")
    page.get_by_label("Round voided").check()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".errornote")).to_be_visible()
    expect(page.locator(".field-url .errorlist")).to_contain_text("The URL must start with https://")
    shot("1-refused")
    assert not Endpoint.objects.exists()
    page.locator("#id_url").fill("https://hooks.example/baccarat")
    page.locator("#id_reason").fill("The table server's receiver")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("shown once")
    shot("2-saved")
    assert Endpoint.objects.get().url == "https://hooks.example/baccarat"


def test_an_approver_without_the_permission_of_the_action_is_refused(page, live_server, sign_in, shot, operator,
                                                                     funded_account):
    account = funded_account("p1", "100.00")
    approval = approval_gate(wallet_services.account_adjust, actor=operator, reason="Jackpot (OPS-12)",
                             external_id=account.external_id, amount="12000.00")
    approver = User.objects.create_user("only-approves", password=PASSWORD, is_staff=True)
    approver.user_permissions.add(*Permission.objects.filter(
        content_type__app_label="approvals", codename__in=["view_approval", "approve_approval"]))
    sign_in(page, approver)
    page.goto(f"{live_server.url}/admin/approvals/approval/{approval.pk}/approve/")
    page.locator("#id_reason").fill("Looks right")
    page.get_by_role("button", name="Approve").click()
    expect(page.locator(".messagelist")).to_contain_text("needs the permission to apply it yourself "
                                                         "(wallet.adjust_account)")
    shot("1-refused")
    assert Approval.objects.get().status == "pending"
    account.refresh_from_db()
    assert account.balance == 100
