"""A game's side bets in the admin: the paytable editor (a row per side bet, an input per event), its
errors naming the side bet and event, the exact RTP of each side bet in the preview, and the side
bets' limits on the RTP policy form."""

import json
from decimal import Decimal

import pytest

from audit.models import AuditEvent
from games import services as game_services
from games.engine import REGISTRY, SIDE_BET_TYPES
from games.models import GameInstance, RtpPolicy
from tests.admin.helpers import admin_url, change_form, snapshot

pytestmark = pytest.mark.django_db

# Player pair at 12 (11 to 1) on the 8-deck shoe: exactly 372/415.
PLAYER_PAIR_RTP = "89.6386"
PREVIEW = {"decks": "8", "player": "2", "banker": "1.95", "tie": "9"}


def offer(**paytables) -> dict:
    """The editor's POST data offering each side bet with its paytable: offer(PLAYER_PAIR={"PAIR": "12"})."""
    data = {}
    for name, paytable in paytables.items():
        data[f"side_bets-{name}"] = "on"
        data.update({f"side_bets-{name}-{event}": multiplier for event, multiplier in paytable.items()})
    return data


def side_bets_errors(response) -> list:
    assert response.status_code == 200, response.status_code
    return response.context["adminform"].form.errors.get("side_bets", [])


def test_the_editor_has_a_row_per_side_bet_with_an_input_per_paying_event(as_operator, game):
    page = as_operator.get(admin_url(game, "change")).content.decode()
    for name in SIDE_BET_TYPES:
        kind = REGISTRY[name]
        assert f'<tr data-side-bet="{name}">' in page and f'name="side_bets-{name}"' in page
        for event in kind.events:
            assert (f'name="side_bets-{name}-{event}"' in page) is (event not in kind.push_events)
    assert "Side bets and their paytables" in page
    assert " checked" not in page.split('id="id_side_bets"')[1].split("</table>")[0]  # none offered yet


def test_valid_side_bets_are_saved_normalised_and_audited(as_operator, game):
    data = change_form(game, reason="Pairs and a dragon", **offer(
        PLAYER_PAIR={"PAIR": " 12 ", "NO_PAIR": ""},
        DRAGON_BONUS_BANKER={"WIN_BY_9": "31", "NATURAL_WIN": "2.0", "WIN_BY_4": "2"},
    ))
    response = as_operator.post(admin_url(game, "change"), data)

    assert response.status_code == 302, side_bets_errors(response)
    game.refresh_from_db()
    # In the registry's order, an empty event left out (it loses), the push added at exactly 1.
    assert game.side_bets == {"PLAYER_PAIR": {"PAIR": "12"},
                              "DRAGON_BONUS_BANKER": {"NATURAL_WIN": "2.0", "WIN_BY_9": "31", "WIN_BY_4": "2",
                                                      "NATURAL_TIE": "1"}}
    configured = AuditEvent.objects.get(action="game.configured")
    assert configured.before == {"side_bets": {}} and configured.after["side_bets"] == game.side_bets
    assert configured.reason == "Pairs and a dragon"


def test_an_offered_side_bet_shows_ticked_with_its_paytable(as_operator, operator, game):
    game_services.game_update(game_id=game.pk, actor=operator, reason="pairs",
                              changes={"side_bets": {"PLAYER_PAIR": {"PAIR": "11.5"}}})
    page = as_operator.get(admin_url(game, "change")).content.decode()
    row = page.split('<tr data-side-bet="PLAYER_PAIR">')[1].split("</tr>")[0]
    assert 'checked' in row and 'value="11.5"' in row
    banker_pair = page.split('<tr data-side-bet="BANKER_PAIR">')[1].split("</tr>")[0]
    assert "checked" not in banker_pair and 'value="12"' in banker_pair  # its default, offered once ticked


def test_unticking_every_side_bet_offers_none(as_operator, operator, game):
    game_services.game_update(game_id=game.pk, actor=operator, reason="pairs",
                              changes={"side_bets": {"PLAYER_PAIR": {"PAIR": "12"}}})
    response = as_operator.post(admin_url(game, "change"),
                                change_form(game, reason="No more pairs", **{"side_bets-PLAYER_PAIR-PAIR": "12"}))
    assert response.status_code == 302
    game.refresh_from_db()
    assert game.side_bets == {}


@pytest.mark.parametrize(("paytable", "message"), [
    ({"PAIR": "0.5"}, "Player pair (PLAYER_PAIR), event PAIR: must be at least 1.0."),
    ({"PAIR": "1001"}, "Player pair (PLAYER_PAIR), event PAIR: must be at most 1000."),
    ({"PAIR": "12.00001"}, "Player pair (PLAYER_PAIR), event PAIR: must have at most 4 decimal places."),
    ({"PAIR": "NaN"}, "Player pair (PLAYER_PAIR), event PAIR: must be a decimal number written in ASCII digits"),
    ({"PAIR": "1e1"}, "Player pair (PLAYER_PAIR), event PAIR: must be a decimal number written in ASCII digits"),
    ({"PAIR": "12,5"}, "Player pair (PLAYER_PAIR), event PAIR: must be a decimal number written in ASCII digits"),
    ({"PAIR": "１２"}, "Player pair (PLAYER_PAIR), event PAIR: must be a decimal number written in ASCII digits"),
    ({"PAIR": ""}, "Player pair (PLAYER_PAIR): must pay on at least one event."),
])
def test_a_bad_paytable_is_a_form_error_naming_the_side_bet_and_event(as_operator, game, paytable, message):
    before = snapshot()
    response = as_operator.post(admin_url(game, "change"),
                                change_form(game, reason="Pairs", **offer(PLAYER_PAIR=paytable)))

    assert any(error.startswith(message) for error in side_bets_errors(response)), side_bets_errors(response)
    assert snapshot() == before and GameInstance.objects.get().side_bets == {}


def test_every_bad_event_is_named_at_once(as_operator, game):
    response = as_operator.post(admin_url(game, "change"), change_form(game, reason="x", **offer(
        PLAYER_PAIR={"PAIR": "0.9"}, EITHER_PAIR={"ONE_PAIR": "abc", "TWO_PAIRS": "6"})))
    errors = side_bets_errors(response)
    assert any("Player pair (PLAYER_PAIR), event PAIR" in error for error in errors)
    assert any("Either pair (EITHER_PAIR), event ONE_PAIR" in error for error in errors)


def test_a_side_bet_above_the_ceiling_is_a_form_error_on_the_side_bets(as_operator, game):
    before = snapshot()
    # Player pair at 14 (13 to 1) returns 14 × 7.4699 % = 104.58 % on 8 decks: above MAX_GAME_RTP.
    response = as_operator.post(admin_url(game, "change"),
                                change_form(game, reason="Promo", **offer(PLAYER_PAIR={"PAIR": "14"})))

    errors = side_bets_errors(response)
    assert any("Player pair bet's return to player" in error and "above the ceiling of 100.0000 %" in error
               for error in errors), errors
    assert snapshot() == before
    preview = response.context["rtp_preview"]  # the preview shows what was entered, flagged
    pair = next(bet for bet in preview["bets"] if bet["bet_type"] == "PLAYER_PAIR")
    assert pair["over_100"] is True and "Player pair" in preview["warning"]


@pytest.fixture
def pairs_policy(administrator, game):
    policy = game_services.rtp_policy_create(actor=administrator, name="Pairs", max_player_pair_rtp=Decimal("89"))
    game_services.game_update(game_id=game.pk, actor=administrator, reason="assign", changes={"rtp_policy": policy})
    return policy


def test_a_side_bet_outside_the_policy_is_a_form_error_on_the_side_bets(as_operator, game, pairs_policy):
    before = snapshot()
    response = as_operator.post(admin_url(game, "change"), change_form(
        game, rtp_policy=str(pairs_policy.pk), reason="Pairs", **offer(PLAYER_PAIR={"PAIR": "12"})))

    errors = side_bets_errors(response)
    assert any(f"{PLAYER_PAIR_RTP} %, is above the maximum of 89.0000 % of the RTP policy “Pairs”" in error
               for error in errors), errors
    assert snapshot() == before
    assert response.context["rtp_preview"]["policy_errors"]


def test_the_change_page_previews_each_offered_side_bet(as_operator, operator, game):
    game_services.game_update(game_id=game.pk, actor=operator, reason="pairs",
                              changes={"side_bets": {"PLAYER_PAIR": {"PAIR": "12"}}})
    response = as_operator.get(admin_url(game, "change"))
    page = response.content.decode()
    assert '<tr data-bet="PLAYER_PAIR" data-side="1"' in page
    assert f"{PLAYER_PAIR_RTP} %" in page and 'title="exactly 372/415"' in page
    assert [bet["bet_type"] for bet in response.context["rtp_preview"]["bets"]] == [
        "PLAYER", "BANKER", "TIE", "PLAYER_PAIR"]


def preview(client, **params):
    return client.get(admin_url(GameInstance, "rtp_preview"), {**PREVIEW, **params})


def test_the_preview_endpoint_answers_with_each_side_bets_exact_rtp(as_operator):
    side_bets = {"PLAYER_PAIR": {"PAIR": "12"},
                 "BANKER_COMMISSION_FREE": {"BANKER_WIN": "2", "BANKER_WIN_ON_SIX": "1.5"}}
    response = preview(as_operator, side_bets=json.dumps(side_bets))

    assert response.status_code == 200, response.json()
    bets = {bet["bet_type"]: bet for bet in response.json()["bets"]}
    assert list(bets) == ["PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "BANKER_COMMISSION_FREE"]
    pair = bets["PLAYER_PAIR"]
    assert (pair["side"], pair["rtp"], pair["rtp_exact"], pair["multiplier"]) == (True, PLAYER_PAIR_RTP, "372/415",
                                                                                  "PAIR 12")
    assert pair["win_probability"] == "7.4699" and pair["over_100"] is False
    assert bets["BANKER_COMMISSION_FREE"]["rtp"] == "98.5419"
    assert bets["BANKER"]["side"] is False


def test_the_preview_of_a_side_bet_depends_on_the_decks(as_operator):
    side_bets = json.dumps({"PERFECT_PAIR": {"ONE_PERFECT_PAIR": "26", "TWO_PERFECT_PAIRS": "26"}})
    one = preview(as_operator, decks="1", side_bets=side_bets).json()
    eight = preview(as_operator, side_bets=side_bets).json()
    # One deck has no two identical cards: a perfect pair never happens.
    assert one["bets"][3]["rtp"] == "0.0000" and eight["bets"][3]["rtp"] != "0.0000"


def test_the_preview_endpoint_shows_the_side_bets_policy_limits(as_operator, pairs_policy):
    body = preview(as_operator, policy=str(pairs_policy.pk), side_bets='{"PLAYER_PAIR": {"PAIR": "12"}}').json()
    pair = next(bet for bet in body["bets"] if bet["bet_type"] == "PLAYER_PAIR")
    assert (pair["max_rtp"], pair["outside_policy"]) == ("89.0000", True)
    assert len(body["policy_errors"]) == 1 and "Player pair" in body["policy_errors"][0]


@pytest.mark.parametrize(("side_bets", "named"), [
    ('{"PLAYER_PAIR": {"PAIR": "12"', "not valid JSON"),
    ('{"PLAYER_PAIR": {"PAIR": NaN}}', "Player pair (PLAYER_PAIR), event PAIR: must be a decimal number"),
    ('{"PLAYER_PAIR": {"PAIR": 1e400}}', "Player pair (PLAYER_PAIR), event PAIR: must be a decimal number"),
    ('{"PLAYER_PAIR": {"PAIR": "0.99"}}', "Player pair (PLAYER_PAIR), event PAIR: must be at least 1.0"),
    ('{"PLAYER_PAIR": {"TRIPLE": "2"}}', "Player pair (PLAYER_PAIR), event TRIPLE: is not an event of PLAYER_PAIR"),
    ('{"DRAGON_BONUS_PLAYER": {"NATURAL_TIE": "2", "WIN_BY_9": "31"}}',
     "Dragon Bonus Player (DRAGON_BONUS_PLAYER), event NATURAL_TIE: is a push: its multiplier must be exactly 1.0"),
    ('{"ROYAL_FLUSH": {"WIN": "2"}}', "Side bet ROYAL_FLUSH: is not a side bet"),
    ('{"PLAYER_PAIR": ["12"]}', "Player pair (PLAYER_PAIR): must map events to multipliers"),
    ('["PLAYER_PAIR"]', "The side bets must map side bet types to paytables"),
    ('{"PLAYER_PAIR": {"PAIR": null}}', "Player pair (PLAYER_PAIR), event PAIR: must be a decimal number"),
])
def test_the_preview_endpoint_names_a_bad_side_bet_and_event(as_operator, side_bets, named):
    response = preview(as_operator, side_bets=side_bets)

    assert response.status_code == 400
    assert named in response.json()["errors"]["side_bets"]


def test_a_json_number_is_read_as_the_decimal_it_is_written_as(as_operator):
    body = preview(as_operator, side_bets='{"PLAYER_PAIR": {"PAIR": 11.5}}').json()
    assert body["bets"][3]["multiplier"] == "PAIR 11.5"


# --- The RTP policy form ----------------------------------------------------------------------------

def test_the_policy_form_has_a_minimum_and_maximum_for_every_side_bet(as_admin):
    page = as_admin.get(admin_url(RtpPolicy, "add")).content.decode()
    for name in SIDE_BET_TYPES:
        assert f'name="min_{name.lower()}_rtp"' in page and f'name="max_{name.lower()}_rtp"' in page


def test_the_policy_form_saves_side_bet_limits_and_the_game_form_keeps_them(as_admin, as_operator, game):
    response = as_admin.post(admin_url(RtpPolicy, "add"), {
        "name": "Pairs", "description": "", "min_player_pair_rtp": "85", "max_player_pair_rtp": "90.5",
        "max_dragon_bonus_banker_rtp": "99"})
    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    policy = RtpPolicy.objects.get()
    assert (policy.min_player_pair_rtp, policy.max_player_pair_rtp) == (Decimal("85.0000"), Decimal("90.5000"))
    assert policy.max_dragon_bonus_banker_rtp == Decimal("99.0000") and policy.max_banker_pair_rtp is None

    changed = as_admin.post(admin_url(policy, "change"), {
        "name": "Pairs", "description": "", "min_player_pair_rtp": "85", "max_player_pair_rtp": "91",
        "reason": "Looser"})
    assert changed.status_code == 302
    assert RtpPolicy.objects.get().max_player_pair_rtp == Decimal("91.0000")

    response = as_operator.post(admin_url(game, "change"), change_form(
        game, rtp_policy=str(policy.pk), reason="Pairs", **offer(PLAYER_PAIR={"PAIR": "12"})))
    assert response.status_code == 302, side_bets_errors(response)
    assert GameInstance.objects.get().side_bets == {"PLAYER_PAIR": {"PAIR": "12"}}


def test_tightening_a_policy_past_a_games_side_bet_is_a_form_error(as_admin, operator, game, pairs_policy):
    game_services.rtp_policy_update(policy_id=pairs_policy.pk, actor=operator, reason="x",
                                    changes={"max_player_pair_rtp": Decimal("95")})
    game_services.game_update(game_id=game.pk, actor=operator, reason="pairs",
                              changes={"side_bets": {"PLAYER_PAIR": {"PAIR": "12"}}})
    response = as_admin.post(admin_url(pairs_policy, "change"),
                             {"name": "Pairs", "description": "", "max_player_pair_rtp": "89", "reason": "tighter"})
    assert response.status_code == 200
    assert "Game main-table: The Player pair bet&#x27;s return to player" in response.content.decode()
    assert RtpPolicy.objects.get().max_player_pair_rtp == Decimal("95.0000")


# --- Lists and read-only views ------------------------------------------------------------------------

def test_the_changelist_sums_up_the_side_bets_rtp(as_operator, operator, game):
    game_services.game_update(game_id=game.pk, actor=operator, reason="pairs", changes={"side_bets": {
        "PLAYER_PAIR": {"PAIR": "12"}, "BANKER_COMMISSION_FREE": {"BANKER_WIN": "2", "BANKER_WIN_ON_SIX": "1.5"}}})
    page = as_operator.get(admin_url(GameInstance)).content.decode()
    assert "B 98.9421 %" in page and "+2 side, up to 98.5419 %" in page
    assert f'title="Player pair {PLAYER_PAIR_RTP} %; Banker, commission free 98.5419 %"' in page


def test_those_who_may_only_view_read_the_paytables_as_text(as_support, operator, game):
    game_services.game_update(game_id=game.pk, actor=operator, reason="pairs", changes={"side_bets": {
        "EITHER_PAIR": {"ONE_PAIR": "6", "TWO_PAIRS": "6"}, "PLAYER_PAIR": {"PAIR": "12"}}})
    page = as_support.get(admin_url(game, "change")).content.decode()
    assert "Player pair: PAIR 12; Either pair: TWO_PAIRS 6, ONE_PAIR 6" in page
    assert 'name="side_bets-PLAYER_PAIR"' not in page
    assert f"{PLAYER_PAIR_RTP} %" in page  # the preview panel still shows each side bet


# --- The side bets posted as JSON text (a script's post, not the editor's rows) -------------------------

@pytest.mark.parametrize(("side_bets", "named"), [
    ('{"PLAYER_PAIR": {"PAIR": "12"', "The side bets are not valid JSON"),
    ('{"PLAYER_PAIR": {"PAIR": 12.5e1}}', "Player pair (PLAYER_PAIR), event PAIR: must be a decimal number"),
    ('{"PLAYER_PAIR": {"PAIR": NaN}}', "Player pair (PLAYER_PAIR), event PAIR: must be a decimal number"),
    ('{"PLAYER_PAIR": {"TRIPLE": "2"}}', "Player pair (PLAYER_PAIR), event TRIPLE: is not an event of PLAYER_PAIR"),
    ('{"BANKER_COMMISSION_FREE": {"TIE": "1.5", "BANKER_WIN": "2"}}',
     "Banker, commission free (BANKER_COMMISSION_FREE), event TIE: is a push: its multiplier must be exactly 1.0."),
    ('{"PLAYER_PAIR": {"PAIR": "0.5"}}', "Player pair (PLAYER_PAIR), event PAIR: must be at least 1.0."),
    ('{"ROYAL_FLUSH": {"WIN": "2"}}', "Side bet ROYAL_FLUSH: is not a side bet"),
    ('"PLAYER_PAIR"', "The side bets must map side bet types to paytables."),
])
def test_side_bets_posted_as_json_name_the_bad_event(as_operator, game, side_bets, named):
    before = snapshot()
    response = as_operator.post(admin_url(game, "change"), change_form(game, reason="x", side_bets=side_bets))

    assert any(named in error for error in side_bets_errors(response)), side_bets_errors(response)
    assert snapshot() == before


def test_side_bets_posted_as_json_are_saved_normalised(as_operator, game):
    side_bets = '{"EITHER_PAIR": {"ONE_PAIR": 6, "TWO_PAIRS": "6.5"}, "PLAYER_PAIR": {"PAIR": 12}}'
    response = as_operator.post(admin_url(game, "change"), change_form(game, reason="x", side_bets=side_bets))
    assert response.status_code == 302, side_bets_errors(response)
    game.refresh_from_db()
    assert game.side_bets == {"PLAYER_PAIR": {"PAIR": "12"}, "EITHER_PAIR": {"TWO_PAIRS": "6.5", "ONE_PAIR": "6"}}
