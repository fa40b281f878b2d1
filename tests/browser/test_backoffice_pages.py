"""The back-office pages a newcomer tripped on, in a browser: the round page (ledger entries, tableau,
"1 bet", dates), the account's two histories, lists that fit a laptop screen, Recompute as a page, the
403 page, the multiplier's help and limit, Recent actions, the API docs' introduction and the dashboard
with one day of play. Each test would fail on the defect it names; each leaves screenshots."""

import re

import pytest
from playwright.sync_api import expect

from games import services as game_services
from games.models import GameInstance

pytestmark = pytest.mark.browser

SECONDS_AND_ZONE = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC")


def fits(page, selector: str) -> bool:
    """The element shows all it holds: nothing is cut off or left to a sideways scroll."""
    return page.evaluate("s => { const e = document.querySelector(s); return e.scrollWidth <= e.clientWidth + 1; }",
                         selector)


def test_round_page_reads_right_and_recompute_is_a_linkable_page(page, live_server, sign_in, shot, support,
                                                                 operator, game, play, funded_account):
    player = funded_account("player-1", "100.00")
    round_ = play(game, bets=[(player, "BANKER", "10.00")])
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    sign_in(page, support)
    page.goto(f"{live_server.url}/admin/games/round/{round_.pk}/change/")

    ledger = page.locator("td.field-ledger").first
    expect(ledger).to_contain_text("Stake (debit)")
    expect(ledger).to_contain_text("Payout (credit)") if round_.bets.get().payout else None
    assert "<br>" not in ledger.inner_text()
    expect(page.locator(".field-bet_totals")).to_contain_text("1 bet, staked 10.00")
    expect(page.locator(".field-opened_at .readonly")).to_have_text(SECONDS_AND_ZONE)
    # The tableau's reasons start where the other values of the form start.
    reasons = page.locator(".field-tableau ul.pf-reasons").bounding_box()
    outcome = page.locator(".field-outcome .readonly").bounding_box()
    assert abs(reasons["x"] - outcome["x"]) < 2, (reasons, outcome)
    shot("1-round")

    page.get_by_role("link", name="Recompute by PF-1").click()
    expect(page).to_have_url(re.compile(rf"/admin/games/round/{round_.pk}/verify/$"))
    expect(page.locator(".pf-verdict")).to_contain_text("✔ Matches")
    page.reload()  # a page like any other: reloaded (or linked), it shows the same
    expect(page.locator(".pf-verdict")).to_contain_text("✔ Matches")
    shot("2-recomputed")


def test_account_page_has_two_histories_with_two_names(page, live_server, sign_in, shot, operator, funded_account):
    player = funded_account("player-1", "100.00")
    sign_in(page, operator)
    page.goto(f"{live_server.url}/admin/wallet/account/{player.pk}/change/")
    tools = page.locator(".object-tools a")
    labels = [text.strip().lower() for text in tools.all_inner_texts()]
    assert len(labels) == len(set(labels)), labels
    expect(page.get_by_role("link", name="Ledger history")).to_have_count(1)
    expect(page.get_by_role("link", name="Change log")).to_have_count(1)
    shot("1-account")
    page.get_by_role("link", name="Ledger history").click()
    expect(page.locator("h1")).to_contain_text("History of player-1")


@pytest.mark.parametrize("width", [1366, 1440])
def test_lists_fit_a_laptop_screen(page, live_server, sign_in, shot, operator, game, play, funded_account, width):
    player = funded_account("player-1", "500.00")
    for _ in range(3):
        play(game, bets=[(player, "PLAYER", "10.00"), (player, "TIE", "1.00")])
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, operator)
    for path, column in (("/admin/games/gameinstance/", "bet limits"),
                         ("/admin/games/gameinstance/", "return to player"), ("/admin/games/round/", "outcome"),
                         ("/admin/settlement/settlementbatch/", "total paid out"),
                         ("/admin/games/seedpair/", "revealed at"), ("/admin/games/bet/", "payout"),
                         ("/admin/wallet/ledgerentry/", "balance after"), ("/admin/audit/auditevent/", "action")):
        page.goto(f"{live_server.url}{path}")
        assert fits(page, "#changelist .results"), f"{path} at {width} px: the list runs off its box"
        header = page.locator("#result_list thead th").filter(has_text=re.compile(column, re.I)).first
        box = header.bounding_box()
        assert box["x"] + box["width"] <= width, (path, column, box)
        expect(page.locator("#result_list tbody tr").first).to_be_visible()
    shot(f"1-batches-{width}")
    page.goto(f"{live_server.url}/admin/games/gameinstance/")
    expect(page.locator("#result_list tbody td.field-updated_at").first).to_have_text(SECONDS_AND_ZONE)
    shot(f"2-games-{width}")


def test_a_refused_page_says_which_role_is_needed_and_leads_back(page, live_server, sign_in, shot, support, game,
                                                                 integration):
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    sign_in(page, support)
    page.goto(f"{live_server.url}/admin/games/round/{round_.pk}/change/")
    statuses = []
    page.on("response", lambda response: statuses.append(response.status) if "/void/" in response.url else None)
    page.goto(f"{live_server.url}/admin/games/round/{round_.pk}/void/", referer=page.url)
    assert statuses == [403]
    expect(page.locator("#site-name")).to_be_visible()  # the back-office's page, not a bare "403 Forbidden"
    expect(page.locator("#denied-permission")).to_contain_text("games.void_round")
    expect(page.locator("#denied-permission")).to_contain_text("Operators")
    expect(page.locator("#denied-own-role")).to_contain_text("Support")
    shot("1-denied")
    page.locator("#denied-back").click()
    expect(page).to_have_url(re.compile(rf"/admin/games/round/{round_.pk}/change/$"))


def test_multiplier_help_limit_and_rtp_heading(page, live_server, sign_in, shot, operator, game):
    sign_in(page, operator)
    page.goto(f"{live_server.url}/admin/games/gameinstance/{game.pk}/change/")
    help_text = page.locator(".field-tie_multiplier .help")
    expect(help_text).to_contain_text("stake included")
    expect(help_text).to_contain_text("2.0 returns twice the stake")
    heading = page.locator("#rtp-preview h2")
    expect(heading).to_contain_text("-deck shoe")
    page.locator("#id_tie_multiplier").fill("1000000")
    expect(page.locator('#rtp-preview [data-field="invalid"]')).to_be_visible()
    expect(heading).to_have_text("Return to player")  # no "?-deck shoe"
    page.locator("#id_reason").fill("Try a huge tie")
    page.locator("input[name=_save]").click()
    errors = page.locator(".field-tie_multiplier .errorlist li")
    expect(errors).to_have_text(["A multiplier must be at most 1000."])
    shot("1-multiplier-too-large")
    assert GameInstance.objects.get(pk=game.pk).tie_multiplier != 1000000


def test_recent_actions_show_service_actions(page, live_server, sign_in, shot, operator, game, integration,
                                             funded_account):
    player = funded_account("player-1", "100.00")
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    sign_in(page, operator)
    page.goto(f"{live_server.url}/admin/wallet/account/{player.pk}/adjust/")
    page.get_by_label("Amount").fill("25.00")
    page.get_by_label("Reason").fill("Goodwill")
    page.get_by_role("button", name="Adjust").click()
    page.goto(f"{live_server.url}/admin/games/round/{round_.pk}/void/")
    page.get_by_label("Reason").fill("Misdeal")
    page.get_by_role("button", name="Void and refund").click()
    page.goto(f"{live_server.url}/admin/games/gameinstance/{game.pk}/rotate-seed/")
    page.get_by_label("Reason").fill("New shoe")
    page.locator("form button[type=submit], form input[type=submit]").last.click()
    page.goto(f"{live_server.url}/admin/")
    recent = page.locator("#recent-actions-module")
    expect(recent).to_contain_text(str(player))
    expect(recent).to_contain_text(str(round_))
    expect(recent.locator("li")).to_have_count(3)
    shot("1-recent-actions")


def test_api_docs_open_with_an_introduction(page, live_server, shot):
    page.goto(f"{live_server.url}/api/docs/")
    info = page.locator(".swagger-ui .info")
    expect(info).to_contain_text("Roles")
    expect(info).to_contain_text("Authorization: Token")
    expect(info).to_contain_text("Idempotency keys")
    expect(info).to_contain_text("Errors")
    expect(info).to_contain_text("Provably fair (PF-1)")
    shot("1-api-docs")


def test_the_dashboard_reads_with_one_day_of_play(page, live_server, sign_in, shot, operator, game, play,
                                                  funded_account):
    player = funded_account("player-1", "500.00")
    for _ in range(4):
        play(game, bets=[(player, "BANKER", "10.00")])
    sign_in(page, operator)
    page.goto(f"{live_server.url}/admin/dashboard/")
    expect(page.locator("body")).to_have_attribute("data-charts", "ready")
    expect(page.locator("#dashboard-sparse")).to_be_visible()
    expect(page.locator("#dashboard-sparse")).to_contain_text("Only 1 day with play")
    # The day of play is a point that shows, not a dot lost at the right edge; the empty days draw none.
    radii = page.evaluate("(() => { const chart = window.dashboardCharts.rtp; const meta = chart.getDatasetMeta(0); "
                          "return meta.data.map(point => point.options.radius); })()")
    assert max(radii) >= 5 and sorted(radii)[-2] == 0, radii
    shot("1-dashboard-one-day")
