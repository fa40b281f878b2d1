"""Four eyes in the browser: an operator changes the payouts of a game that has taken bets; the change
waits; a second operator finds it in the approvals queue with the exact RTP before and after, and
approves it with a reason; then the dashboard shows an open alert on top."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from alerts import services as alert_services
from alerts.checks import Finding
from backoffice.roles import Role
from games.models import GameInstance
from tests.conftest import make_user

pytestmark = pytest.mark.browser


def test_a_payout_change_waits_for_a_second_operator(page, live_server, sign_in, shot, operator, game, play,
                                                      funded_account):
    play(game, bets=[(funded_account("p1", "100.00"), "BANKER", "10.00")])
    sign_in(page, operator)
    page.goto(f"{live_server.url}/admin/games/gameinstance/{game.pk}/change/")
    page.get_by_label("Banker multiplier").fill("1.9")
    page.locator("#id_reason").fill("Banker promotion (OPS-77)")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("needs a second person")
    shot("1-sent-for-approval")
    assert GameInstance.objects.get().banker_multiplier == Decimal("1.95")

    page.context.clear_cookies()
    sign_in(page, make_user("oscar-operator", Role.OPERATOR))
    page.get_by_role("link", name="Approvals", exact=True).click()
    page.locator("#result_list tbody th a").first.click()
    rtp = page.locator(".pf-rtp-diff")
    expect(rtp).to_contain_text("98.9421 %")
    expect(rtp).to_contain_text("96.6491 %")
    shot("2-queue-item")
    page.get_by_role("link", name="Approve…").click()
    page.locator("#id_reason").fill("Checked with the promotions plan")
    page.get_by_role("button", name="Approve").click()
    expect(page.locator(".messagelist")).to_contain_text("approved and applied")
    shot("3-approved")
    assert GameInstance.objects.get().banker_multiplier == Decimal("1.9")

    alert_services.alert_raise(Finding("settlement_lag", "settlement", "warning", "3 dealt rounds wait for 300 s."))
    page.goto(f"{live_server.url}/admin/dashboard/")
    expect(page.locator("#open-alerts")).to_contain_text("3 dealt rounds wait for 300 s.")
    shot("4-dashboard-alert")
