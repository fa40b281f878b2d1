"""A player, signed in nowhere, recomputes a dealt round on the public verification page from the seed
the page itself publishes once revealed, and gets a field error for a bad input."""

import pytest
from playwright.sync_api import expect

from games import services as game_services
from games.engine import label_symbol
from games.models import SeedPair

pytestmark = pytest.mark.browser


def test_player_recomputes_a_round_from_the_revealed_seed(page, live_server, shot, operator, game, play,
                                                          funded_account):
    player = funded_account("player-1", "100.00")
    play(game, bets=[(player, "BANKER", "5.00")])
    played = play(game, bets=[(player, "PLAYER", "10.00")])
    pair = played.seed_pair

    # Before the rotation the page publishes the hash only.
    page.goto(f"{live_server.url}/")
    article = page.locator(f"#game-{game.slug}")
    expect(article.locator("code.active-hash")).to_have_text(pair.server_seed_hash)
    expect(article).to_contain_text("No seed revealed yet.")
    assert pair.server_seed not in page.content()
    shot("1-hash-published")

    game_services.seed_rotate(game_id=game.pk, actor=operator)
    new_pair = SeedPair.objects.get(game=game, revealed_at__isnull=True)
    page.reload()
    row = article.locator("tbody tr").first
    expect(row).to_contain_text(pair.server_seed)
    expect(article.locator("code.active-hash")).to_have_text(new_pair.server_seed_hash)
    assert new_pair.server_seed not in page.content()

    # The player copies the revealed seed and the client seed from the page, and the round's nonce.
    server_seed = row.locator("td").nth(1).inner_text().strip()
    client_seed = row.locator("td").nth(3).inner_text().strip()
    assert (server_seed, client_seed) == (pair.server_seed, pair.client_seed)
    page.locator("#id_server_seed").fill(server_seed)
    page.locator("#id_client_seed").fill(client_seed)
    page.locator("#id_nonce").fill(str(played.nonce))
    page.locator("#id_decks").fill(str(played.decks))
    shot("2-form-filled")
    page.get_by_role("button", name="Recompute").click()

    result = page.locator("#result")
    expect(result).to_be_visible()
    expect(page.locator("#result-cards li")).to_have_count(len(played.cards))
    for position, label in enumerate(played.cards, start=1):
        card = page.locator("#result-cards li").nth(position - 1)
        expect(card.locator(".pos")).to_have_text(str(position))
        expect(card).to_have_text(f"{position}{label_symbol(label)}")
    expect(page.locator("#result-outcome")).to_contain_text(f"Outcome: {played.outcome}")
    expect(page.locator("#result-hash")).to_have_text(pair.server_seed_hash)
    expect(result).to_contain_text(f"the revealed seed of {game.name}")
    expect(result.locator(".hands")).to_contain_text(f"Player — {played.player_score}")
    expect(result.locator(".hands")).to_contain_text(f"Banker — {played.banker_score}")
    expect(page.locator(".error")).to_have_count(0)
    shot("3-round-recomputed")


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
