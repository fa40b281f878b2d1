"""A support user in the browser: looks a player's round up, sees its cards as cards, verifies it once
its seed is revealed, and cannot change a game's configuration."""

import re

import pytest
from playwright.sync_api import expect

from audit.models import AuditEvent
from games import services as game_services
from games.engine import label_symbol
from games.models import GameInstance

pytestmark = pytest.mark.browser

# Colours of backoffice/admin.css: red and black cards, the green of a match.
RED, BLACK, GREEN = "rgb(198, 40, 40)", "rgb(17, 17, 17)", "rgb(46, 125, 50)"


def card_class(label: str) -> str:
    return "pf-card-red" if label[-1] in "DH" else "pf-card-black"


def test_support_looks_a_round_up_sees_its_cards_and_verifies_it_after_rotation(
        page, live_server, sign_in, shot, support, operator, game, play, funded_account):
    alice, bob = funded_account("player-alice", "200.00"), funded_account("player-bob", "200.00")
    play(game, bets=[(alice, "PLAYER", "5.00")])
    wanted = play(game, bets=[(bob, "BANKER", "20.00"), (alice, "TIE", "1.00")])
    play(game, bets=[(alice, "BANKER", "5.00")])
    wanted.refresh_from_db()
    assert wanted.status == "SETTLED" and len(wanted.cards) >= 4

    sign_in(page, support)
    page.get_by_role("link", name="Rounds", exact=True).first.click()
    expect(page.locator("h1")).to_contain_text("Select round to view")  # view only
    # The player's complaint names their account: the round recall finds the rounds they bet on.
    page.get_by_role("link", name="Round recall").click()
    page.get_by_label("Account").fill(bob.external_id)
    shot("1-recall-form")
    page.get_by_role("button", name="Find rounds").click()
    rows = page.locator("#recall-results tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first.locator(".pf-card")).to_have_count(len(wanted.cards))
    shot("2-round-found")
    rows.first.get_by_role("link", name=f"#{wanted.pk}", exact=True).click()

    # The cards as cards, in dealt order, red suits in red, each with its position and hand; the
    # hands, the tableau, the outcome, the bets.
    expect(page.locator("h1")).to_contain_text("View round")
    cards = page.locator(".field-cards_shown .pf-cards > .pf-card")
    expect(cards).to_have_text([label_symbol(label) for label in wanted.cards])
    for index, label in enumerate(wanted.cards):
        expect(cards.nth(index)).to_have_class(f"pf-card {card_class(label)}")
        expect(cards.nth(index)).to_have_css("color", RED if label[-1] in "DH" else BLACK)
    positions = page.locator(".field-cards_shown .pf-positions li")
    expect(positions).to_have_count(len(wanted.cards))
    for index, label in enumerate(wanted.cards[:4]):
        expect(positions.nth(index)).to_have_text(re.compile(
            rf"^\s*{index + 1}\s+{'Player' if index % 2 == 0 else 'Banker'}\s+{re.escape(label_symbol(label))}\s*$"))
    expect(page.locator(".field-player_hand")).to_contain_text(f"→ {wanted.player_score}")
    expect(page.locator(".field-banker_hand")).to_contain_text(f"→ {wanted.banker_score}")
    expect(page.locator(".field-outcome")).to_contain_text(wanted.get_outcome_display())
    expect(page.locator(".field-tableau li").first).to_be_visible()
    expect(page.locator(".field-bet_totals")).to_contain_text("2 bets, staked 21.00")
    expect(page.locator(".field-nonce")).to_contain_text(str(wanted.nonce))
    # Before the rotation: no seed, nothing to verify yet, and no void for support.
    expect(page.locator(".field-server_seed_shown")).to_contain_text("Secret until the seed pair is revealed")
    expect(page.locator(".field-verification")).to_contain_text("Possible once the seed pair is revealed")
    expect(page.get_by_role("link", name="Recompute by PF-1")).to_have_count(0)
    expect(page.get_by_role("link", name="Void round…")).to_have_count(0)
    assert wanted.seed_pair.server_seed not in page.content()
    shot("3-round-before-rotation")

    # An operator rotates the game's seed (in their own session); the support user reloads.
    revealed, _new = game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    assert revealed.pk == wanted.seed_pair_id
    page.reload()
    expect(page.locator(".field-server_seed_shown")).to_contain_text(revealed.server_seed)
    shot("4-round-revealed")
    page.get_by_role("link", name="Recompute by PF-1").click()

    result = page.locator("#verification-result")
    verdict = result.locator(".pf-verdict")
    expect(verdict).to_have_class("pf-ok pf-verdict")
    expect(verdict).to_contain_text("✔ Matches")
    expect(verdict).to_have_css("color", GREEN)
    expect(page.locator("ul.messagelist")).to_contain_text("it matches the stored round")
    expect(result).to_contain_text(revealed.server_seed)
    expect(result.locator(".pf-bad")).to_have_count(0)
    comparison = result.locator(".pf-comparison tbody tr")
    expect(comparison.first).to_be_visible()
    for row in comparison.all():  # stored and recomputed, the same, row by row
        cells = row.locator("td")
        expect(cells.nth(2)).to_have_text("✔")
        assert cells.nth(0).inner_text() == cells.nth(1).inner_text()
    stored_cards = comparison.filter(has_text="Cards in dealt order").locator("td").nth(0).locator(".pf-card")
    expect(stored_cards).to_have_text([label_symbol(label) for label in wanted.cards])
    expect(stored_cards.first).to_have_css("border-top-style", "solid")  # drawn as cards: admin.css is there
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"], \
        "the verification page runs wider than the window"
    shot("5-round-verified")


def test_support_is_refused_a_configuration_change(page, live_server, sign_in, shot, support, game):
    game.refresh_from_db()
    before = game.configuration()
    sign_in(page, support)
    events = AuditEvent.objects.count()  # after the log-in, itself an event of the authentication log

    # The game page is read-only: values as text, no inputs, no reason, no save, no rotation.
    page.goto(f"{live_server.url}/admin/games/gameinstance/{game.pk}/change/")
    expect(page.locator("h1")).to_contain_text("View game instance")
    expect(page.locator(".field-tie_multiplier .readonly")).to_have_text(before["tie_multiplier"])
    for selector in ("#id_tie_multiplier", "#id_name", "#id_reason", 'input[name="_save"]',
                     'input[name="_continue"]', "a.pf-rotate-seed"):
        expect(page.locator(selector)).to_have_count(0)
    # The preview panel still shows the figures, computed by the server; its script has nothing to follow.
    expect(page.locator('#rtp-preview tr[data-bet="TIE"] [data-field="rtp"]')).to_contain_text("%")
    shot("1-game-read-only")

    # A hand-made POST to the change page, with a valid CSRF token and the session: 403, nothing written.
    csrf = next(cookie["value"] for cookie in page.context.cookies() if cookie["name"] == "csrftoken")
    change_url = f"{live_server.url}/admin/games/gameinstance/{game.pk}/change/"
    form = {"csrfmiddlewaretoken": csrf, "name": game.name, "status": game.status, "decks": str(game.decks),
            "player_multiplier": before["player_multiplier"], "banker_multiplier": before["banker_multiplier"],
            "tie_multiplier": "50", "min_bet": before["min_bet"], "max_bet": before["max_bet"],
            "currency": game.currency, "reason": "support should not be able to do this", "_save": "Save"}
    response = page.request.post(change_url, form=form, headers={"Referer": change_url})
    assert response.status == 403, response.status
    assert "CSRF" not in response.text()  # refused for the permission, not for the token
    # Nor the rotation page, nor the live preview endpoint (operator tools).
    assert page.request.get(f"{change_url.removesuffix('change/')}rotate-seed/").status == 403
    assert page.request.post(f"{change_url.removesuffix('change/')}rotate-seed/", form={"csrfmiddlewaretoken": csrf},
                             headers={"Referer": change_url}).status == 403
    assert page.request.get(f"{live_server.url}/admin/games/gameinstance/rtp-preview/?decks=8&player=2&banker=1.95"
                            "&tie=50").status == 403
    game.refresh_from_db()
    assert game.configuration() == before
    assert AuditEvent.objects.count() == events
    assert not GameInstance.objects.filter(tie_multiplier=50).exists()

    # What the browser shows for the same POST: the back-office's 403 page, naming what is needed.
    page.goto(change_url)
    with page.expect_navigation():
        page.evaluate("""() => {
            const form = document.createElement("form");
            form.method = "post";
            form.action = location.pathname;
            const fields = {csrfmiddlewaretoken: document.cookie.match(/csrftoken=([^;]+)/)[1], tie_multiplier: "50",
                            reason: "support should not be able to do this", _save: "Save"};
            for (const [name, value] of Object.entries(fields)) {
                const input = document.createElement("input");
                input.type = "hidden"; input.name = name; input.value = value;
                form.appendChild(input);
            }
            document.body.appendChild(form);
            form.submit();
        }""")
    expect(page.locator("h1")).to_contain_text("You may not open this page")
    expect(page.locator(".errornote")).to_contain_text("(403)")
    expect(page.locator("#denied-permission")).to_contain_text("games.change_gameinstance")
    expect(page.locator("#denied-own-role")).to_contain_text("Support")
    expect(page.locator("body")).not_to_contain_text("CSRF")
    shot("2-post-refused")
    game.refresh_from_db()
    assert game.configuration() == before
