"""The rough edges a new user met, in a browser at a laptop's, a desktop's and a phone's width: the
admin index's support tools, the site's icon, the four-eyes count, the round page's public link and the
public pair page on a phone. Each page is kept as a screenshot per width (artifacts/screenshots)."""

import pytest
from playwright.sync_api import expect

from games import services as game_services

pytestmark = pytest.mark.browser

WIDTHS = {"1366": (1366, 768), "1920": (1920, 1080), "390": (390, 844)}


def no_sideways_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def at_each_width(page, shot, step: str, check=lambda width: None):
    """Shoot the page at each width (reloaded, as a person on that screen would open it), then ``check``."""
    for name, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        page.reload()
        shot(f"{step}-{name}")
        check(width)


def test_admin_index_support_tools_read_as_words_and_the_queue_is_counted(page, live_server, sign_in, shot,
                                                                           operator):
    sign_in(page, operator)
    page.goto(f"{live_server.url}/admin/")

    def check(width):
        for name in ("Round recall", "Account history", "Audit trail"):
            box = page.locator("#support-tools").get_by_role("link", name=name).bounding_box()
            assert box["width"] > box["height"], f"{name} at {width} px: {box}"  # not a letter per line
        expect(page.locator("#pending-approvals")).to_contain_text("No request waits for a second person")
        if width == 390:
            assert no_sideways_scroll(page)
            # Each app's heading spans its list, as at other widths (backoffice/phone.css leaves them tables).
            app = page.locator("#content-main .app-games")
            assert app.locator("caption").bounding_box()["width"] >= app.locator("tr").first.bounding_box()["width"]

    at_each_width(page, shot, "index", check)


def test_every_page_has_the_site_icon_and_favicon_ico_answers(page, live_server, sign_in, shot, operator):
    for path in ("/admin/login/", "/"):
        page.goto(f"{live_server.url}{path}")
        icon = page.locator("link[rel=icon]").get_attribute("href")
        assert page.request.get(f"{live_server.url}{icon}").status == 200, path
    answer = page.request.get(f"{live_server.url}/favicon.ico")
    assert answer.status == 200 and "svg" in answer.headers["content-type"]
    sign_in(page, operator)
    assert page.locator("link[rel=icon]").count() == 1


def test_round_page_links_the_public_pair_page_which_fits_a_phone(page, live_server, sign_in, shot, support,
                                                                  operator, game, play, funded_account):
    player = funded_account("player-7", "500.00")
    rounds = [play(game, bets=[(player, "BANKER", "10.00")]) for _ in range(3)]
    voided = game_services.round_open(game_id=game.pk, actor=operator)
    game_services.round_void(round_id=voided.pk, actor=operator, reason="never dealt")  # no outcome: not listed
    pair, _new = game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")

    sign_in(page, support)
    page.goto(f"{live_server.url}/admin/games/round/{rounds[0].pk}/change/")
    public_link = page.locator(".field-verification a.pf-public-pair")
    expect(public_link).to_have_attribute("href", f"/pairs/{pair.server_seed_hash}/")
    at_each_width(page, shot, "round")
    public_link.click()

    expect(page.locator("#pair-count")).to_have_text("3 rounds")

    def check(width):
        if width != 390:
            return
        assert no_sideways_scroll(page)
        for row in range(3):  # the outcome and Verify of each round are on the screen, not cut off
            for cell in (page.locator("#pair-rounds td[data-label=Outcome]").nth(row),
                         page.locator("#pair-rounds td.verify a").nth(row)):
                box = cell.bounding_box()
                assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box

    at_each_width(page, shot, "public-pair", check)


def test_four_eyes_pages_and_the_account_history_read_well(page, live_server, sign_in, shot, operator, game,
                                                           play, funded_account):
    player = funded_account("player-7", "500.00")
    play(game, bets=[(player, "BANKER", "10.00")])
    sign_in(page, operator)
    page.goto(f"{live_server.url}/admin/wallet/account/{player.pk}/adjust/")
    expect(page.locator("body")).to_contain_text("Four eyes:")
    page.get_by_label("Amount").fill("12000.00")
    page.get_by_label("Reason").fill("Jackpot")
    page.get_by_role("button", name="Adjust").click()
    page.goto(f"{live_server.url}/admin/approvals/approval/")
    expect(page.locator("#result_list")).to_contain_text("Adjust account player-7 by 12,000.00 USD")
    at_each_width(page, shot, "approvals")
    page.goto(f"{live_server.url}/admin/")
    expect(page.locator("#pending-approvals")).to_contain_text("1 request waits for a second person")
    page.goto(f"{live_server.url}/admin/wallet/account/{player.pk}/account-history/")
    expect(page.locator("#ledger-history")).to_contain_text("UTC")
    expect(page.locator(".pf-statement-csv")).to_be_visible()
    at_each_width(page, shot, "account-history", lambda width: width != 390 or assert_fits(page))


def assert_fits(page):
    assert no_sideways_scroll(page)
