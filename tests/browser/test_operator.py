"""An operator in the browser: changes a multiplier with a reason while the live return-to-player
preview follows the typing, finds the audit event of the change, and rotates a seed."""

import json
import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from audit.models import AuditEvent
from games import services as game_services
from games.forms import rtp_preview
from games.models import SeedPair

pytestmark = pytest.mark.browser


def expected_rtp(game, *, tie) -> dict:
    """The figures the panel should show, from the same exact computation the server does."""
    preview = rtp_preview(decks=game.decks, player=game.player_multiplier, banker=game.banker_multiplier, tie=tie)
    assert preview["ok"]
    return {bet["bet_type"]: bet for bet in preview["bets"]} | {"warning": preview["warning"]}


def assert_inside(element, container):
    """The element is drawn within the container's box (not cut off by it)."""
    inner, outer = element.bounding_box(), container.bounding_box()
    assert inner["x"] >= outer["x"] and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5, (inner, outer)


def test_operator_changes_the_tie_multiplier_with_a_reason_and_finds_the_audit_event(
        page, live_server, sign_in, shot, operator, game):
    static_js = []
    page.on("response", lambda response: static_js.append((response.url, response.status))
            if response.url.endswith("/rtp_preview.js") else None)
    previews = []
    page.on("response", lambda response: previews.append(response.status) if "/rtp-preview/" in response.url else None)
    reason = "Tie pays 8 from today (ticket OPS-1421)"
    game.refresh_from_db()
    tie_before = game.configuration()["tie_multiplier"]  # as the audit trail writes it: "9.0000"
    assert Decimal(tie_before) == 9

    sign_in(page, operator)
    shot("1-signed-in")

    # The game, from the back-office index.
    page.get_by_role("link", name="Game instances").first.click()
    page.get_by_role("link", name=game.slug, exact=True).click()
    expect(page.locator("h1")).to_contain_text("Change game instance")
    # The live preview's script is served (200, or 304 once cached: the game list loads it too).
    assert static_js and all(status in (200, 304) for _url, status in static_js), static_js

    panel = page.locator("#rtp-preview")
    tie_rtp = panel.locator('tr[data-bet="TIE"] [data-field="rtp"]')
    warning = panel.locator('[data-field="warning"]')
    expect(tie_rtp).to_have_text(f'{expected_rtp(game, tie=tie_before)["TIE"]["rtp"]} %')
    expect(warning).to_be_hidden()
    shot("2-game-form")

    # Typing 11: the preview asks the server and shows the tie bet above 100 %, with the warning.
    tie = page.locator("#id_tie_multiplier")
    tie.fill("")
    tie.press_sequentially("11")
    over = expected_rtp(game, tie="11")
    assert float(over["TIE"]["rtp"]) > 100
    expect(tie_rtp).to_have_text(f'{over["TIE"]["rtp"]} %')
    expect(panel.locator('tr[data-bet="TIE"] [data-field="multiplier"]')).to_have_text("11")
    expect(panel.locator('tr[data-bet="TIE"]')).to_have_class(re.compile(r"\bpf-rtp-over\b"))
    expect(warning).to_be_visible()
    expect(warning).to_have_text(over["warning"])
    expect(warning).to_contain_text("exceeds 100 %")
    shot("3-tie-11-over-100-warning")

    # Typing 8: back under 100 %, the warning goes away.
    tie.fill("")
    tie.press_sequentially("8")
    under = expected_rtp(game, tie="8")
    assert float(under["TIE"]["rtp"]) < 100
    expect(tie_rtp).to_have_text(f'{under["TIE"]["rtp"]} %')
    expect(warning).to_be_hidden()
    expect(panel.locator('tr[data-bet="TIE"]')).not_to_have_class(re.compile(r"\bpf-rtp-over\b"))
    # The other bets did not move.
    expect(panel.locator('tr[data-bet="BANKER"] [data-field="rtp"]')).to_have_text(f'{under["BANKER"]["rtp"]} %')
    assert previews and set(previews) == {200}, previews
    shot("4-tie-8-no-warning")

    # The reason, then save. Leaving the tie field sends one more preview (its change event): it is
    # answered before the save, as a person would see it.
    with page.expect_response(lambda response: "/rtp-preview/" in response.url):
        page.locator("#id_reason").fill(reason)
    shot("5-reason-entered")
    page.locator('input[name="_save"]').click()
    expect(page.locator("ul.messagelist")).to_contain_text("was changed successfully")
    shot("6-saved")
    game.refresh_from_db()
    tie_after = game.configuration()["tie_multiplier"]
    assert Decimal(tie_after) == 8

    # The audit trail: filtered by action, then the event itself.
    page.goto(f"{live_server.url}/admin/")
    page.get_by_role("link", name="Audit events").first.click()
    page.locator("#changelist-filter").get_by_role("link", name="game.configured", exact=True).click()
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(reason)
    expect(rows.first).to_contain_text(operator.username)
    shot("7-audit-list")
    rows.first.locator("th a, td a").first.click()

    event = AuditEvent.objects.get(action="game.configured", object_id=str(game.pk))
    assert event.reason == reason and event.actor_user_id == operator.pk
    assert event.before == {"tie_multiplier": tie_before} and event.after == {"tie_multiplier": tie_after}
    expect(page.locator("h1")).to_contain_text("View audit event")
    expect(page.locator(".field-action")).to_contain_text("game.configured")
    expect(page.locator(".field-actor")).to_contain_text(operator.username)
    expect(page.locator(".field-reason")).to_contain_text(reason)
    expect(page.locator(".field-before_shown pre")).to_have_text(json.dumps(event.before, indent=2))
    expect(page.locator(".field-after_shown pre")).to_have_text(json.dumps(event.after, indent=2))
    # Its place in the Merkle log: its leaf index once sequenced (on commit here), else "pending".
    expect(page.locator(".field-leaf_position .readonly")).to_have_text(re.compile(r"^(\d+|pending)$"))
    shot("8-audit-event")


def test_operator_rotates_a_seed_and_sees_the_revealed_seed_and_the_new_hash(
        page, live_server, sign_in, shot, operator, game, play, funded_account):
    player = funded_account("player-1", "100.00")
    play(game, bets=[(player, "BANKER", "10.00")])
    old = SeedPair.objects.get(game=game, revealed_at__isnull=True)
    sign_in(page, operator)

    page.goto(f"{live_server.url}/admin/games/gameinstance/{game.pk}/change/")
    active = page.locator(".field-active_seed_pair")
    expect(active).to_contain_text(old.server_seed_hash)
    expect(page.locator(".field-revealed_seed_pairs")).to_contain_text("None yet")
    assert old.server_seed not in page.content()
    shot("1-game-before")

    page.get_by_role("link", name="Rotate seed…").click()
    expect(page.locator("h1")).to_contain_text(f"Rotate the seed of {game.slug}")
    expect(page.locator("#content-main")).to_contain_text(old.server_seed_hash)
    assert old.server_seed not in page.content()
    page.get_by_label("Reason").fill("New shoe at the table")
    shot("2-rotate-page")
    page.get_by_role("button", name="Reveal and rotate").click()

    old.refresh_from_db()
    new = SeedPair.objects.get(game=game, revealed_at__isnull=True)
    assert old.is_revealed and new.pk != old.pk
    expect(page.locator("ul.messagelist")).to_contain_text(f"the new pair's hash is {new.server_seed_hash}")
    expect(page.locator("ul.messagelist")).to_contain_text(f"revealed the pair with hash {old.server_seed_hash[:16]}")
    # The revealed pair with its seed, the new pair by its hash only.
    revealed = page.locator(".field-revealed_seed_pairs")
    expect(revealed).to_contain_text(old.server_seed)
    expect(revealed).to_contain_text(old.server_seed_hash)
    expect(active).to_contain_text(new.server_seed_hash)
    expect(active).not_to_contain_text(old.server_seed_hash)
    # All of it in sight: the row of a read-only field clips what runs out of it (overflow: hidden).
    seed_cell = revealed.locator("td", has_text=old.server_seed)
    expect(seed_cell).to_have_text(old.server_seed)
    assert_inside(seed_cell, revealed)
    html = page.content()
    assert new.server_seed not in html and new.server_seed[:16] not in html
    shot("3-game-after-rotation")

    # The same from the game list's action, on a second game.
    second = game_services.game_create(actor=operator, slug="second-table", name="Second table",
                                       min_bet="1.00", max_bet="100.00")
    second_old = SeedPair.objects.get(game=second, revealed_at__isnull=True)
    page.goto(f"{live_server.url}/admin/games/gameinstance/")
    page.locator(f'#result_list tr:has(a:text-is("{second.slug}")) input.action-select').check()
    page.locator('select[name="action"]').select_option("rotate_seeds")
    shot("4-changelist-action")
    page.locator('button[name="index"]').click()
    expect(page.locator("h1")).to_contain_text("Rotate seeds")
    page.get_by_label("Reason").fill("Shift change")
    page.get_by_role("button", name="Reveal and rotate").click()
    second_new = SeedPair.objects.get(game=second, revealed_at__isnull=True)
    expect(page.locator("ul.messagelist")).to_contain_text(second_new.server_seed_hash)
    second_old.refresh_from_db()
    assert second_old.is_revealed
    assert second_new.server_seed not in page.content()
    shot("5-changelist-after-action")
