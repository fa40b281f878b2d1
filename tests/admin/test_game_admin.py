"""The game instance admin: create and change through the services, validation, the RTP preview,
seed rotation, and what each role may do."""

from decimal import Decimal

import pytest

from audit.models import AuditEvent
from games import services as game_services
from games.models import GameInstance, SeedPair
from tests.admin.helpers import GAME_FORM, admin_url, change_form, snapshot

# Games created at once (four eyes on creation: tests/admin/test_approvals_admin.py).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("games_created_at_once")]


def form_errors(response, field):
    """The errors the admin form shows for ``field`` (the response must re-render the form)."""
    assert response.status_code == 200, response.status_code
    form = response.context["adminform"].form
    return form.errors.get(field, [])


# --- Create -----------------------------------------------------------------------------------------

def test_operator_creates_a_game_through_the_service(as_operator, operator):
    response = as_operator.post(admin_url(GameInstance, "add"), {**GAME_FORM, "client_seed": "my-client-seed"})

    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    game = GameInstance.objects.get(slug="second-table")
    assert (game.decks, game.tie_multiplier, game.max_bet) == (6, Decimal("8.0"), Decimal("500.00"))
    pair = SeedPair.objects.get(game=game, revealed_at__isnull=True)
    assert pair.client_seed == "my-client-seed"
    created = AuditEvent.objects.get(action="game.created", object_id=str(game.pk))
    assert created.actor_user == operator
    assert created.after["tie_multiplier"] == "8.0000"


def test_an_empty_client_seed_gets_a_random_one(as_operator):
    as_operator.post(admin_url(GameInstance, "add"), GAME_FORM)

    pair = SeedPair.objects.get(game__slug="second-table")
    assert len(pair.client_seed) == 16


def test_the_add_form_has_an_optional_reason_field(as_operator):
    # Required only when the new game needs a second person (tests/admin/test_approvals_admin.py).
    response = as_operator.get(admin_url(GameInstance, "add"))

    assert response.status_code == 200
    assert not response.context["adminform"].form.fields["reason"].required
    assert b'name="client_seed"' in response.content


def test_a_multiplier_far_too_large_gets_the_rule_its_help_states(as_operator, game):
    response = as_operator.post(admin_url(GameInstance, "add"), {**GAME_FORM, "tie_multiplier": "1000000"})
    assert form_errors(response, "tie_multiplier") == ["A multiplier must be at most 1000."]
    help_text = response.context["adminform"].form.fields["tie_multiplier"].help_text
    assert "1,000" in help_text and "stake included" in help_text and "2.0 returns twice the stake" in help_text


@pytest.mark.parametrize("field, value, message", [
    ("player_multiplier", "0.5", "at least 1.0"),
    ("banker_multiplier", "1000.5", "at most 1000"),
    ("tie_multiplier", "1.23456", "4 decimal places"),
    ("tie_multiplier", "abc", "Enter a number"),
    ("player_multiplier", "NaN", "Enter a number"),
    ("tie_multiplier", "８", "ASCII digits"),
    ("min_bet", "1_0", "ASCII digits"),
    ("decks", "9", "1 to 8 decks"),
    ("decks", "0", "1 to 8 decks"),
    ("currency", "usd", "ISO 4217"),
    ("currency", "EURO", "Unknown currency"),  # the shape of a configured code, but none is configured
    ("currency", "EURO1234X", "8 characters"),
    ("min_bet", "1.005", "USD has 2 decimal places"),
    ("min_bet", "0", "greater than zero"),
    ("max_bet", "0.50", "at least the minimum bet"),
    ("client_seed", "bad\x07seed", "control characters"),
    ("client_seed", "';touch x;'", "the digits 0-9"),
    ("client_seed", "my client seed", "the digits 0-9"),
    ("slug", "main-table", "already exists"),
])
def test_invalid_input_is_a_form_error_on_its_field_and_writes_nothing(as_operator, game, field, value, message):
    before = snapshot()

    response = as_operator.post(admin_url(GameInstance, "add"), {**GAME_FORM, field: value})

    errors = form_errors(response, field)
    assert any(message in error for error in errors), errors
    assert snapshot() == before


# --- Change -----------------------------------------------------------------------------------------

def test_operator_changes_a_game_with_a_reason(as_operator, operator, game):
    response = as_operator.post(admin_url(game, "change"),
                                change_form(game, tie_multiplier="8.5", name="Main", reason="Promotion week"))

    assert response.status_code == 302
    game.refresh_from_db()
    assert (game.tie_multiplier, game.name) == (Decimal("8.5"), "Main")
    event = AuditEvent.objects.get(action="game.configured", object_id=str(game.pk))
    assert event.actor_user == operator
    assert event.reason == "Promotion week"
    assert event.before == {"name": "Main table", "tie_multiplier": "9.0000"}
    assert event.after == {"name": "Main", "tie_multiplier": "8.5000"}


def test_a_status_change_is_audited_with_its_reason(as_operator, game):
    as_operator.post(admin_url(game, "change"), change_form(game, status="suspended", reason="Dealer break"))

    event = AuditEvent.objects.get(action="game.status_changed")
    assert (event.before, event.after, event.reason) == ({"status": "active"}, {"status": "suspended"}, "Dealer break")


@pytest.mark.parametrize("reason", ["", "   "])
def test_a_change_without_a_reason_is_a_form_error_and_writes_nothing(as_operator, game, reason):
    before = snapshot()

    response = as_operator.post(admin_url(game, "change"), change_form(game, tie_multiplier="8.0", reason=reason))

    assert "This field is required." in form_errors(response, "reason")
    assert snapshot() == before


@pytest.mark.parametrize("field, value, message", [
    ("player_multiplier", "0.5", "at least 1.0"),
    ("player_multiplier", "1000.5", "at most 1000"),
    ("banker_multiplier", "1.23456", "4 decimal places"),
    ("tie_multiplier", "abc", "Enter a number"),
    ("tie_multiplier", "Infinity", "Enter a number"),
    ("decks", "9", "1 to 8 decks"),
    ("min_bet", "2000.00", "at least the minimum bet"),
    ("min_bet", "1.001", "2 decimal places"),
    ("currency", "US1", "ISO 4217"),
])
def test_an_invalid_change_is_a_form_error_naming_the_field_and_writes_nothing(as_operator, game, field, value,
                                                                              message):
    errors_field = "max_bet" if message == "at least the minimum bet" else field
    before = snapshot()

    response = as_operator.post(admin_url(game, "change"), change_form(game, reason="Try it", **{field: value}))

    errors = form_errors(response, errors_field)
    assert any(message in error for error in errors), errors
    assert snapshot() == before
    assert b"errornote" in response.content


def test_the_slug_is_read_only_on_change(as_operator, game):
    response = as_operator.post(admin_url(game, "change"), change_form(game, slug="renamed", reason="Rename"))

    assert response.status_code == 302
    game.refresh_from_db()
    assert game.slug == "main-table"


def test_a_service_refusal_after_validation_shows_on_the_form_and_writes_nothing(as_operator, game, monkeypatch):
    from django.core.exceptions import ValidationError

    def refuse(**kwargs):
        raise ValidationError({"tie_multiplier": "Refused by the service."})

    monkeypatch.setattr(game_services, "game_update", refuse)
    before = snapshot()

    response = as_operator.post(admin_url(game, "change"), change_form(game, tie_multiplier="8", reason="Try"))

    assert form_errors(response, "tie_multiplier") == ["Refused by the service."]
    assert snapshot() == before


# --- Return to player -------------------------------------------------------------------------------

def test_the_change_form_shows_the_exact_return_to_player(as_operator, game):
    response = as_operator.get(admin_url(game, "change"))

    content = response.content.decode()
    assert 'id="rtp-preview"' in content
    # Exact odds of the 8-deck shoe (baccarat-rules.md): Banker 98.94 %, Player 98.76 %, Tie 85.64 %.
    for figure in ("98.9421 %", "98.7649 %", "85.6404 %", "1.0579 %", "45.8597 %"):
        assert figure in content
    assert response.context["rtp_preview"]["over_100"] is False
    assert "exceeds 100 %" not in content


def test_the_preview_follows_the_values_entered_and_warns_above_100_percent(as_operator, game):
    # Re-rendered with an error elsewhere, the preview shows the configuration being entered.
    response = as_operator.post(admin_url(game, "change"), change_form(game, tie_multiplier="11", reason=""))

    content = response.content.decode()
    preview = response.context["rtp_preview"]
    tie = next(bet for bet in preview["bets"] if bet["bet_type"] == "TIE")
    assert tie["rtp"] == "104.6716"
    assert tie["over_100"] is True
    assert "104.6716 %" in content
    assert "exceeds 100 %" in content
    assert "on Tie" in content


def test_the_add_form_previews_the_defaults(as_operator):
    response = as_operator.get(admin_url(GameInstance, "add"))

    assert "98.9421 %" in response.content.decode()


def test_a_game_configured_above_the_ceiling_is_refused_on_its_multiplier(as_operator, game):
    # MAX_GAME_RTP (100 %): tie 11 on 8 decks returns 104.6716 %.
    response = as_operator.post(admin_url(game, "change"), change_form(game, tie_multiplier="11", reason="Promo"))

    assert any("above the ceiling of 100.0000 %" in error for error in form_errors(response, "tie_multiplier"))
    game.refresh_from_db()
    assert game.tie_multiplier == Decimal("9")


def test_the_changelist_shows_the_return_to_player_of_each_game(as_operator, game):
    response = as_operator.get(admin_url(GameInstance))

    assert "B 98.9421 %" in response.content.decode()


def test_the_preview_endpoint_returns_exact_figures(as_operator):
    response = as_operator.get(admin_url(GameInstance, "rtp_preview"),
                               {"decks": "8", "player": "2.0", "banker": "1.95", "tie": "11"})

    assert response.status_code == 200
    body = response.json()
    by_bet = {bet["bet_type"]: bet for bet in body["bets"]}
    assert by_bet["BANKER"]["rtp"] == "98.9421"
    assert by_bet["PLAYER"]["house_edge"] == "1.2351"
    assert by_bet["TIE"]["rtp"] == "104.6716"
    assert by_bet["TIE"]["rtp_exact"].count("/") == 1
    assert body["over_100"] is True and "Tie" in body["warning"]
    assert body["probabilities"] == {"player": "44.6247", "banker": "45.8597", "tie": "9.5156"}


def test_the_preview_endpoint_depends_on_the_decks(as_operator):
    one = as_operator.get(admin_url(GameInstance, "rtp_preview"),
                          {"decks": "1", "player": "2", "banker": "1.95", "tie": "9"}).json()
    eight = as_operator.get(admin_url(GameInstance, "rtp_preview"),
                            {"decks": "8", "player": "2", "banker": "1.95", "tie": "9"}).json()

    assert one["decks"] == 1 and one["bets"] != eight["bets"]


def test_the_preview_endpoint_names_bad_inputs(as_operator):
    response = as_operator.get(admin_url(GameInstance, "rtp_preview"),
                               {"decks": "9", "player": "0.5", "banker": "1.23456", "tie": "abc"})

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert set(errors) == {"decks", "player_multiplier", "banker_multiplier", "tie_multiplier"}


def test_the_preview_endpoint_needs_the_permission_to_configure_games(as_support, client, integration):
    url = admin_url(GameInstance, "rtp_preview")
    assert as_support.get(url, {"decks": "8", "player": "2", "banker": "1.95", "tie": "9"}).status_code == 403
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]


def test_the_page_loads_the_live_preview_script(as_operator, game):
    response = as_operator.get(admin_url(game, "change"))

    assert b"games/rtp_preview.js" in response.content
    assert b'data-url="/admin/games/gameinstance/rtp-preview/"' in response.content


# --- Seed rotation ----------------------------------------------------------------------------------

def test_the_rotate_action_asks_a_reason_then_reveals_the_active_pair(as_operator, operator, game):
    old = SeedPair.objects.get(game=game, revealed_at__isnull=True)
    selected = {"action": "rotate_seeds", "_selected_action": [game.pk]}

    page = as_operator.post(admin_url(GameInstance), selected)
    assert page.status_code == 200 and "reason" in page.context["form"].fields
    refused = as_operator.post(admin_url(GameInstance), {**selected, "apply": "1", "reason": "  "})
    assert refused.context["form"].errors["reason"]
    assert not SeedPair.objects.filter(game=game, revealed_at__isnull=False).exists()

    response = as_operator.post(admin_url(GameInstance), {**selected, "apply": "1", "reason": "Quarterly"},
                                follow=True)

    old.refresh_from_db()
    assert old.is_revealed
    new = SeedPair.objects.get(game=game, revealed_at__isnull=True)
    assert new.pk != old.pk and new.client_seed == old.client_seed
    assert AuditEvent.objects.get(action="seed_pair.revealed").actor_user == operator
    assert AuditEvent.objects.get(action="seed_pair.retired").reason == "Quarterly"
    assert new.server_seed_hash in response.content.decode()


def test_the_rotate_button_page_rotates_with_a_new_client_seed(as_operator, game):
    page = as_operator.get(admin_url(game, "rotate_seed"))
    assert page.status_code == 200
    assert b"csrfmiddlewaretoken" in page.content

    response = as_operator.post(admin_url(game, "rotate_seed"), {"client_seed": "fresh-seed", "reason": "New shoe"})

    assert response.status_code == 302 and response["Location"] == admin_url(game, "change")
    assert AuditEvent.objects.get(action="seed_pair.retired").reason == "New shoe"
    assert SeedPair.objects.get(game=game, revealed_at__isnull=True).client_seed == "fresh-seed"
    assert SeedPair.objects.filter(game=game, revealed_at__isnull=False).count() == 1


def test_the_change_page_links_to_the_rotation(as_operator, as_support, game):
    assert b"rotate-seed/" in as_operator.get(admin_url(game, "change")).content
    assert b"rotate-seed/" not in as_support.get(admin_url(game, "change")).content


def test_a_rotation_while_a_round_is_open_says_the_reveal_is_pending(as_operator, game, play):
    play(deal=False)
    old = SeedPair.objects.get(game=game)

    response = as_operator.post(admin_url(game, "rotate_seed"), {"client_seed": "", "reason": "Shift change"},
                                follow=True)

    messages = [str(message) for message in response.context["messages"]]
    assert any("revealed automatically once its open rounds" in message for message in messages), messages
    old.refresh_from_db()
    assert old.retired_at and not old.is_revealed
    assert old.server_seed not in response.content.decode()


def test_a_rotation_with_a_bad_client_seed_is_a_form_error(as_operator, game):
    before = snapshot()

    response = as_operator.post(admin_url(game, "rotate_seed"), {"client_seed": "x" * 65, "reason": "New shoe"})

    assert response.status_code == 200
    assert response.context["form"].errors["client_seed"]
    assert snapshot() == before


@pytest.mark.parametrize("reason", ["", "   "])
def test_a_rotation_without_a_reason_is_a_form_error(as_operator, game, reason):
    before = snapshot()

    response = as_operator.post(admin_url(game, "rotate_seed"), {"client_seed": "", "reason": reason})

    assert response.status_code == 200
    assert response.context["form"].errors["reason"]
    assert snapshot() == before


def test_support_cannot_rotate(as_support, game):
    before = snapshot()

    assert as_support.post(admin_url(game, "rotate_seed"), {"client_seed": ""}).status_code == 403
    response = as_support.post(admin_url(GameInstance), {"action": "rotate_seeds", "_selected_action": [game.pk]})

    assert response.status_code == 200  # the action is not offered: "No action selected."
    assert snapshot() == before


# --- Roles ------------------------------------------------------------------------------------------

def test_support_views_games_read_only_and_gets_403_on_change_and_add(as_support, game):
    page = as_support.get(admin_url(game, "change"))
    assert page.status_code == 200
    assert b'name="tie_multiplier"' not in page.content
    assert b"98.9421 %" in page.content
    assert as_support.get(admin_url(GameInstance)).status_code == 200
    before = snapshot()

    change = as_support.post(admin_url(game, "change"), change_form(game, tie_multiplier="8", reason="No"))
    add = as_support.post(admin_url(GameInstance, "add"), GAME_FORM)

    assert (change.status_code, add.status_code) == (403, 403)
    assert as_support.get(admin_url(GameInstance, "add")).status_code == 403
    assert snapshot() == before


def test_nobody_deletes_a_game(as_admin, game):
    assert as_admin.get(admin_url(game, "delete")).status_code == 403
    assert as_admin.post(admin_url(game, "delete"), {"post": "yes"}).status_code == 403
    assert GameInstance.objects.filter(pk=game.pk).exists()


def test_administrators_change_games_too(as_admin, administrator, game):
    response = as_admin.post(admin_url(game, "change"), change_form(game, max_bet="2000.00", reason="VIP"))

    assert response.status_code == 302
    game.refresh_from_db()
    assert game.max_bet == Decimal("2000.00")
