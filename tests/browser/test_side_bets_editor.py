"""An operator offers a side bet in the browser: ticks it in the paytable editor, types its multiplier
while the live preview adds the side bet's exact RTP after the main bets, and saves it."""

import re

import pytest
from playwright.sync_api import expect

from games.forms import rtp_preview
from games.models import GameInstance

pytestmark = pytest.mark.browser


def side_bet_rtp(game, paytable: dict) -> dict:
    """The Player pair row the panel should show, from the server's own exact computation."""
    preview = rtp_preview(decks=game.decks, player=game.player_multiplier, banker=game.banker_multiplier,
                          tie=game.tie_multiplier, side_bets={"PLAYER_PAIR": paytable})
    assert preview["ok"]
    return next(bet for bet in preview["bets"] if bet["bet_type"] == "PLAYER_PAIR")


def test_operator_offers_a_player_pair_and_the_preview_follows(page, live_server, sign_in, shot, operator, game):
    previews = []
    page.on("response", lambda response: previews.append(response.status) if "/rtp-preview/" in response.url else None)
    sign_in(page, operator, next_path=f"/admin/games/gameinstance/{game.pk}/change/")
    panel = page.locator("#rtp-preview")
    pair_row = panel.locator('tr[data-bet="PLAYER_PAIR"]')
    expect(panel.locator('tr[data-bet="BANKER"] [data-field="rtp"]')).to_have_text("98.9421 %")
    expect(pair_row).to_have_count(0)  # not offered yet

    editor = page.locator('#id_side_bets tr[data-side-bet="PLAYER_PAIR"]')
    editor.locator('input[type="checkbox"]').check()  # offered at its default paytable, 12
    expect(pair_row.locator('[data-field="rtp"]')).to_have_text(f'{side_bet_rtp(game, {"PAIR": "12"})["rtp"]} %')
    expect(pair_row.locator('[data-field="multiplier"]')).to_have_text("PAIR 12")
    shot("1-player-pair-offered")

    pair = editor.locator('input[data-event="PAIR"]')
    pair.fill("")
    pair.press_sequentially("14")
    over = side_bet_rtp(game, {"PAIR": "14"})
    assert float(over["rtp"]) > 100
    expect(pair_row.locator('[data-field="rtp"]')).to_have_text(f'{over["rtp"]} %')
    expect(pair_row).to_have_class(re.compile(r"\bpf-rtp-over\b"))
    expect(panel.locator('[data-field="warning"]')).to_contain_text("Player pair")
    shot("2-player-pair-over-100")

    pair.fill("0.5")  # not a multiplier: the panel says which side bet and event
    expect(panel.locator('[data-field="invalid"]')).to_contain_text("Player pair (PLAYER_PAIR), event PAIR")
    shot("3-bad-multiplier")

    pair.fill("11")
    expect(pair_row.locator('[data-field="multiplier"]')).to_have_text("PAIR 11")
    with page.expect_response(lambda response: "/rtp-preview/" in response.url):
        page.locator("#id_reason").fill("Player pair at 10 to 1")
    page.locator('input[name="_save"]').click()
    expect(page.locator("ul.messagelist")).to_contain_text("was changed successfully")
    assert GameInstance.objects.get(pk=game.pk).side_bets == {"PLAYER_PAIR": {"PAIR": "11"}}
    assert 200 in previews and 400 in previews, previews
    shot("4-saved")
