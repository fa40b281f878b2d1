"""A player, signed in nowhere, checks rounds on the public verification page: from the commitments to a
revealed pair's rounds, one click to a recomputed round drawn as cards, a link that reproduces it, field
errors for bad input; and the page reads on a phone."""

import pytest
from playwright.sync_api import expect

from games import services as game_services
from games.engine import label_symbol, play_round, third_card_reasons
from games.models import SeedPair
from tests.browser.conftest import csp_violations_of

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def _played_and_revealed(game, play, operator, funded_account, rounds=3):
    player = funded_account("player-1", "500.00")
    played = [play(game, bets=[(player, "BANKER", "5.00")]) for _ in range(rounds)]
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    return played


def test_player_goes_from_a_revealed_pair_to_a_recomputed_round_in_one_click(page, live_server, shot, operator,
                                                                             game, play, funded_account):
    pair = play(game).seed_pair
    page.goto(f"{live_server.url}/")
    article = page.locator(f"#game-{game.slug}")
    expect(article.locator("code.active-hash")).to_have_text(pair.server_seed_hash)
    expect(article).to_contain_text("No seed revealed yet.")
    assert pair.server_seed not in page.content()
    shot("1-hash-published")

    played = _played_and_revealed(game, play, operator, funded_account)
    new_pair = SeedPair.objects.get(game=game, revealed_at__isnull=True)
    page.reload()
    row = article.locator("table.revealed tbody tr").first
    expect(row.locator("td.seed")).to_have_text(pair.server_seed)
    expect(article.locator("code.active-hash")).to_have_text(new_pair.server_seed_hash)
    assert new_pair.server_seed not in page.content()
    expect(row.locator("td.rounds")).to_contain_text("4 rounds")
    # The revealed date reads on one line (it used to wrap mid-word).
    when = row.locator("td.when time").bounding_box()
    assert when["height"] < 2 * 24, when
    shot("2-revealed")

    row.get_by_role("link", name="4 rounds").click()
    expect(page.locator("#pair-seed")).to_have_text(pair.server_seed)
    expect(page.locator("#pair-rounds tbody tr")).to_have_count(4)
    shot("3-pair-rounds")
    target = played[1]
    page.locator("#pair-rounds tbody tr").nth(target.nonce).get_by_role("link", name="Verify").click()

    # Prefilled, recomputed, drawn.
    expect(page.locator("#id_server_seed")).to_have_value(pair.server_seed)
    expect(page.locator("#id_nonce")).to_have_value(str(target.nonce))
    result = page.locator("#result")
    expect(result).to_be_visible()
    expect(page.locator("#result-outcome")).to_contain_text(f"Outcome: {target.outcome}")
    expect(page.locator("#result-player .score")).to_have_text(str(target.player_score))
    expect(page.locator("#result-banker .score")).to_have_text(str(target.banker_score))
    expect(page.locator("#result-player .pcard")).to_have_count(len(target.player_cards))
    expect(page.locator("#result-banker .pcard")).to_have_count(len(target.banker_cards))
    for position, label in enumerate(target.cards):
        card = page.locator("#result-cards li").nth(position)
        expect(card.locator(".pos")).to_have_text(str(position + 1))
        expect(card.locator(".pcard")).to_have_attribute("title", label_symbol(label))
    reasons = third_card_reasons(play_round(pair.server_seed, pair.client_seed, target.nonce, target.decks))
    expect(page.locator("#result-reasons li")).to_have_text(reasons)
    expect(result).to_contain_text(f"the revealed seed of {game.name}")
    expect(page.locator("#result-hash")).to_have_text(pair.server_seed_hash)
    shot("4-round-recomputed")

    # The link is the verification: opened afresh, it shows the same round.
    link = page.locator("#result-link").get_attribute("href")
    page.goto(f"{live_server.url}{link}")
    expect(page.locator("#result-outcome")).to_contain_text(f"Outcome: {target.outcome}")


def test_the_page_reads_on_a_phone(browser, live_server, operator, game, play, funded_account):
    pair = play(game).seed_pair
    played = _played_and_revealed(game, play, operator, funded_account, rounds=1)
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    violations = csp_violations_of(context)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/?server_seed={pair.server_seed}&client_seed={pair.client_seed}"
                  f"&nonce={played[0].nonce}&decks={played[0].decks}")
        expect(page.locator("#result")).to_be_visible()
        # Nothing runs off the side of the screen: no sideways scrolling.
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        for selector in ("#result-player", "#result-banker", "table.revealed td.seed", "#verifier"):
            box = page.locator(selector).first.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (selector, box)
        # Both hands side by side or one under the other, each card whole.
        for card in page.locator(".hand .pcard").all():
            box = card.bounding_box()
            assert box["width"] >= 40 and box["x"] + box["width"] <= PHONE["width"]
        from tests.browser.conftest import SCREENSHOTS
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "test_the_page_reads_on_a_phone-1-phone.png"), full_page=True)
        assert violations == []
    finally:
        context.close()


def test_player_gets_a_field_error_for_a_bad_seed(page, live_server, shot, game):
    statuses = []
    page.on("response", lambda response: statuses.append(response.status) if "server_seed=" in response.url else None)
    page.goto(f"{live_server.url}/")
    page.locator("#id_server_seed").fill("not-a-seed")
    page.locator("#id_client_seed").fill("house-client-seed")
    page.locator("#id_nonce").fill("0")
    page.get_by_role("button", name="Recompute").click()

    error = page.locator("#error-server_seed")
    expect(error).to_be_visible()
    expect(error).to_contain_text("server seed")
    expect(page.locator(".field.has-error")).to_have_count(1)
    expect(page.locator("#result")).to_have_count(0)
    expect(page.locator("#id_server_seed")).to_have_value("not-a-seed")  # kept, to correct it
    assert statuses == [400]
    shot("1-bad-seed")

    # A negative nonce: its own field error.
    page.locator("#id_server_seed").fill("ab" * 32)
    page.locator("#id_nonce").fill("-1")
    page.get_by_role("button", name="Recompute").click()
    expect(page.locator("#error-nonce")).to_be_visible()
    expect(page.locator("#error-server_seed")).to_have_count(0)
    expect(page.locator("#result")).to_have_count(0)
    shot("2-bad-nonce")


def test_the_offline_command_reads_and_copies_quoted(page, live_server, shot):
    """A hostile client seed in a verification link: the command the page shows, as a player selects and
    copies it, is the verifier with every argument quoted (two spaces stay two)."""
    from urllib.parse import urlencode

    from games.engine import server_seed_hash
    from games.views import offline_command

    server_seed, client_seed = "0" * 63 + "1", "';touch pwned;'  $(id) `id`"
    page.goto(f"{live_server.url}/?" + urlencode({"server_seed": server_seed, "client_seed": client_seed,
                                                  "nonce": 3, "decks": 8}))
    command = page.locator("#result-command")
    expect(command).to_be_visible()
    assert command.inner_text() == offline_command(server_seed=server_seed, client_seed=client_seed, nonce=3,
                                                   decks=8, server_seed_hash=server_seed_hash(server_seed))
    command.scroll_into_view_if_needed()
    shot("1-hostile-seed-command")
