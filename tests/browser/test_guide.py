"""The operator guide's daily tasks (docs/guide/daily-tasks.md), done in the browser as the guide says.

Each test is one task of the guide and checks what the guide's text says the pages show, and that each
page it pictures fits a laptop's, a desktop's and a phone's window (``guide_shot``). Run with
DOCS_SCREENSHOTS=1, they also save the guide's pictures (docs/guide/images/, 1366 px wide, and the
phone's view of the public pages), and the 1920 px and 390 px views of every one in artifacts/.
"""

import csv
import io
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from alerts import services as alert_services
from alerts.checks import Finding
from alerts.models import Alert, Incident
from approvals.models import Approval
from audit.models import AuditEvent
from backoffice.formatting import money, timestamp
from backoffice.roles import Role
from games import services as game_services
from games.models import GameInstance, SeedPair
from tests.conftest import make_user

pytestmark = pytest.mark.browser


@pytest.fixture
def second_operator(db):
    return make_user("oscar-operator", Role.OPERATOR)


@pytest.fixture
def played(game, play, funded_account):
    """A player with a few settled bets on the main table."""
    player = funded_account("player-7", "250.00")
    rounds = [play(game, bets=[(player, bet_type, stake)])
              for bet_type, stake in (("BANKER", "10.00"), ("PLAYER", "25.00"), ("TIE", "5.00"))]
    return player, rounds


def test_create_a_game_then_a_second_operator_approves_it(page, live_server, sign_in, guide_shot, operator,
                                                          second_operator):
    sign_in(page, operator)
    page.goto(f"{live_server.url}/admin/games/gameinstance/add/")
    page.get_by_label("Slug").fill("evening-table")
    page.get_by_label("Name").fill("Evening table")
    page.get_by_label("Minimum bet").fill("5.00")
    page.get_by_label("Maximum bet").fill("2000.00")
    page.locator("#id_reason").fill("New evening table for the VIP room")
    guide_shot("create-game-form", locator=page.locator("#id_tie_multiplier"))
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("second person")
    assert not GameInstance.objects.filter(slug="evening-table").exists()  # nothing yet: it waits
    held = Approval.objects.get()
    expect(page.locator(".messagelist").get_by_role("link", name=f"request #{held.pk}")).to_have_attribute(
        "href", f"/admin/approvals/approval/{held.pk}/change/")  # the message leads to what waits
    guide_shot("create-game-held")

    page.context.clear_cookies()
    sign_in(page, second_operator)
    expect(page.locator("#content")).to_contain_text("1 request waits")
    page.get_by_role("link", name="Approvals", exact=True).click()
    expect(page.locator("#result_list")).to_contain_text("Create the active game evening-table")
    expect(page.locator("#result_list")).to_contain_text("max bet: 2000.00")  # fields named as the request's page
    expect(page.locator("#result_list")).not_to_contain_text("max_bet")
    guide_shot("approve-queue")
    page.locator("#result_list tbody th a").first.click()
    expect(page.get_by_role("link", name="Approve…")).to_be_visible()
    expect(page.locator(".field-diff label")).to_have_text("Change:")  # as the list and the approve form say
    guide_shot("approve-request")
    page.get_by_role("link", name="Approve…").click()
    page.locator("#id_reason").fill("Checked against the VIP room plan")
    guide_shot("approve-form")
    page.get_by_role("button", name="Approve").click()
    expect(page.locator(".messagelist")).to_contain_text("approved and applied")
    assert GameInstance.objects.get(slug="evening-table").max_bet == Decimal("2000.00")
    assert Approval.objects.get().decided_by == second_operator


def test_rotate_a_seed_with_a_reason(page, live_server, sign_in, guide_shot, operator, game, played):
    old = SeedPair.objects.get(game=game, revealed_at__isnull=True)
    sign_in(page, operator)
    page.goto(f"{live_server.url}/admin/games/gameinstance/{game.pk}/change/")
    page.get_by_role("link", name="Rotate seed…").click()
    expect(page.locator("#content-main")).to_contain_text(old.server_seed_hash)
    page.get_by_label("Reason").fill("Weekly rotation")
    guide_shot("rotate-seed-form")
    page.get_by_role("button", name="Reveal and rotate").click()
    revealed = page.locator(".field-revealed_seed_pairs")
    expect(revealed).to_contain_text(old.server_seed)
    guide_shot("rotate-seed-done", locator=revealed)
    assert AuditEvent.objects.get(action="seed_pair.retired").reason == "Weekly rotation"


def test_look_up_a_round_for_a_player(page, live_server, sign_in, guide_shot, operator, support, game, played):
    player, rounds = played
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="Weekly rotation")  # rounds verifiable
    sign_in(page, support)
    page.get_by_role("link", name="Round recall").click()
    page.get_by_label("Account").fill(player.external_id)
    page.get_by_role("button", name="Find rounds").click()
    results = page.locator("#recall-results")
    for round_ in rounds:
        expect(page.locator("#content")).to_contain_text(f"#{round_.pk}")
    guide_shot("recall-by-account", locator=results)
    page.get_by_role("link", name=f"#{rounds[-1].pk}", exact=True).click()
    public_link = page.locator("a.pf-public-pair")
    expect(public_link).to_be_visible()
    guide_shot("recall-round-page", locator=public_link)
    public_link.click()
    expect(page.locator("body")).to_contain_text(rounds[-1].seed_pair.server_seed_hash)
    guide_shot("public-pair", phone=True)  # players open the link support sends them on their phones
    page.get_by_role("link", name="Verify", exact=True).nth(rounds[-1].nonce).click()
    expect(page.locator("#result-outcome")).to_contain_text(rounds[-1].outcome)
    guide_shot("public-verify", phone=True)


def test_handle_an_alert_and_its_incident(page, live_server, sign_in, guide_shot, operator):
    alert, _new = alert_services.alert_raise(Finding(
        "readiness", "workers", "critical", "Not ready: the broker is not reachable (OperationalError)."))
    sign_in(page, operator)
    page.goto(f"{live_server.url}/admin/dashboard/")
    expect(page.locator("#open-alerts")).to_contain_text("the broker is not reachable")
    expect(page.locator("#open-alerts td").last).to_have_text(timestamp(alert.last_seen))  # with its zone
    guide_shot("alert-dashboard", locator=page.locator("#open-alerts"))
    page.goto(f"{live_server.url}/admin/alerts/alert/{alert.pk}/change/")
    page.get_by_role("link", name="Acknowledge…").click()
    page.get_by_label("Note").fill("Restarting the Redis service")
    guide_shot("alert-acknowledge")
    page.get_by_role("button", name="Acknowledge").click()
    expect(page.locator(".messagelist")).to_contain_text("acknowledged")
    page.get_by_role("link", name="Resolve…").click()
    page.get_by_label("Note").fill("Redis is back; workers ready again")
    page.get_by_role("button", name="Resolve").click()
    expect(page.locator(".messagelist")).to_contain_text("resolved")
    assert Alert.objects.get().resolved_by == operator
    page.goto(f"{live_server.url}/admin/alerts/incident/")
    expect(page.locator("#result_list")).to_contain_text("Readiness")
    expect(page.locator("#result_list thead")).to_contain_text("Restored by")
    expect(page.locator("#result_list thead")).not_to_contain_text("actor")  # not the field's internal name
    guide_shot("incidents")
    assert Incident.objects.get().status == "restored"  # its only alert resolved


def test_export_a_players_history(page, live_server, sign_in, guide_shot, support, played):
    player, rounds = played
    sign_in(page, support)
    page.goto(f"{live_server.url}/admin/wallet/account/?q={player.external_id}")
    player.refresh_from_db()
    expect(page.locator("#result_list")).to_contain_text(money(player.balance, "USD"))  # as the guide says
    page.get_by_role("link", name=player.external_id, exact=True).click()
    page.get_by_role("link", name="Ledger history").click()
    export = page.get_by_role("link", name="Export the whole history as CSV")
    expect(export).to_be_visible()
    expect(page.locator("#ledger-history thead")).to_contain_text("Sum matches")  # the ✔ column says what it checks
    guide_shot("history-page")
    with page.expect_download() as download:
        export.click()
    rows = list(csv.DictReader(io.StringIO(download.value.path().read_text())))
    assert rows[0]["kind"] == "ADJUSTMENT" and rows[0]["reason"] == "test deposit"  # oldest first
    stakes = [row for row in rows if row["kind"] == "STAKE"]
    assert [row["round_id"] for row in stakes] == [str(round_.pk) for round_ in rounds]
    assert [row["stake"] for row in stakes] == ["10.00", "25.00", "5.00"]
    assert Decimal(rows[-1]["balance_after"]) == player.balance
