"""The public verification page: no log-in, rounds recomputed, commitments shown, secrets kept."""

import json
import re
from html import unescape
from pathlib import Path

import pytest

from games import services
from games.models import SeedPair

pytestmark = pytest.mark.django_db

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "data" / "pf1-vectors.json").read_text())


@pytest.mark.parametrize("vector", VECTORS[:4] + VECTORS[-2:], ids=lambda v: f"{v['nonce']}-{v['decks']}")
def test_anyone_recomputes_a_round(client, vector):
    response = client.get("/", {"server_seed": vector["server_seed"], "client_seed": vector["client_seed"],
                                "nonce": vector["nonce"], "decks": vector["decks"]})
    assert response.status_code == 200
    result = response.context["result"]
    assert {key: result[key] for key in vector["expected"]} == vector["expected"]
    html = response.content.decode()
    assert vector["expected"]["server_seed_hash"] in html
    assert f"Outcome: <strong>{vector['expected']['outcome']}</strong>" in html
    assert [card["position"] for card in result["positions"]] == list(range(1, len(vector["expected"]["cards"]) + 1))


@pytest.mark.parametrize("field,value", [
    ("server_seed", "ABC"), ("server_seed", "f" * 63), ("client_seed", "bad\x07seed"),
    ("nonce", "-1"), ("nonce", "x"), ("decks", "9"), ("decks", "0"),
])
def test_bad_input_names_the_field(client, field, value):
    params = {"server_seed": "0" * 64, "client_seed": "c", "nonce": "0", "decks": "8", field: value}
    response = client.get("/", params)
    assert response.status_code == 400
    assert field in response.context["form"].errors
    assert f'id="error-{field}"' in response.content.decode()
    assert response.context["result"] is None


def test_commitments_show_hashes_and_revealed_seeds_never_the_active_seed(client, game, operator, integration):
    round_ = services.round_open(game_id=game.pk, actor=integration)
    services.round_deal(round_id=round_.pk, actor=integration)
    revealed, active = services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    html = client.get("/").content.decode()
    assert active.server_seed_hash in html
    assert revealed.server_seed in html
    assert active.server_seed not in html
    assert SeedPair.objects.get(pk=active.pk).revealed_at is None
    # The revealed seed recomputes the dealt round, and the page says whose seed it is.
    response = client.get("/", {"server_seed": revealed.server_seed, "client_seed": revealed.client_seed,
                                "nonce": round_.nonce, "decks": round_.decks})
    round_.refresh_from_db()
    assert response.context["result"]["cards"] == round_.cards
    assert response.context["result"]["known_pair"] == revealed
    assert game.name in response.content.decode()


def test_the_verifier_script_is_offered_for_download(client):
    html = client.get("/").content.decode()
    assert 'href="/static/games/pf1_verify.py" download' in html


def test_a_revealed_pair_lists_its_rounds_each_a_link_that_verifies_it(client, game, operator, integration):
    rounds = []
    for _ in range(3):
        round_ = services.round_open(game_id=game.pk, actor=integration)
        rounds.append(services.round_deal(round_id=round_.pk, actor=integration))
    revealed, active = services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")

    assert client.get(f"/pairs/{active.server_seed_hash}/").status_code == 404  # not revealed: nothing listed
    page = client.get(f"/pairs/{revealed.server_seed_hash}/")
    assert page.status_code == 200
    listed = page.context["rounds"]
    assert [row["nonce"] for row in listed] == [round_.nonce for round_ in rounds]
    assert f'href="/pairs/{revealed.server_seed_hash}/"' in client.get("/").content.decode()
    for row, round_ in zip(listed, rounds, strict=True):
        assert row["verify_url"].startswith("/?") and row["verify_url"].endswith("#result")
        verified = client.get(row["verify_url"].removesuffix("#result")).context["result"]
        assert verified["cards"] == round_.cards and verified["outcome"] == round_.outcome


# Player A♠ A♦ 9♣ (1) against Banker 3♦ 3♥ (6): both hands pair, the Banker wins on six by 5.
PAIRED_ROUND = {"server_seed": "0" * 64, "client_seed": "client", "nonce": 2193, "decks": 1}
PAIRED_ROUND_EVENTS = [
    ("Player", "Banker"), ("Banker", "Banker"), ("Tie", "Banker"), ("Player pair", "Pair"),
    ("Banker pair", "Pair"), ("Either pair", "Two pairs"), ("Perfect pair", "No perfect pair"),
    ("Dragon Bonus Player", "Loss"), ("Dragon Bonus Banker", "Win by 5"),
    ("Banker, commission free", "Banker win on six"),
]


def bet_event_rows(html: str, table_id: str) -> list:
    table = re.search(rf'<table[^>]*id="{table_id}".*?</table>', html, re.S).group(0)
    return re.findall(r'<tr data-bet-type="[A-Z_]+"><th scope="row">(.*?)</th><td>(.*?)</td></tr>', table)


def test_a_verified_round_shows_every_bet_types_event(client):
    response = client.get("/", PAIRED_ROUND)

    assert response.context["result"]["player"]["cards"] == ["AS", "AD", "9C"]
    assert [(bet["bet_type"], bet["event"]) for bet in response.context["result"]["bet_events"]][-2:] == [
        ("DRAGON_BONUS_BANKER", "WIN_BY_5"), ("BANKER_COMMISSION_FREE", "BANKER_WIN_ON_SIX")]
    html = response.content.decode()
    assert "Every bet type on this deal" in html
    assert [(unescape(label), event) for label, event in bet_event_rows(html, "result-bets")] == PAIRED_ROUND_EVENTS
