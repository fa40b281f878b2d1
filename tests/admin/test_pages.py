"""Every admin page loads with data present, for each role as its permissions allow, and none of
them ever shows (or can be made to reveal) the server seed of an unrevealed seed pair."""

import re

import pytest
from django.contrib import admin
from django.urls import reverse

from audit.models import AuditEvent
from audit.services import audit_head_sign, audit_sequence
from games import services as game_services
from games.models import Bet, GameInstance, Round, SeedPair
from settlement.models import SettlementBatch
from tests.admin.helpers import admin_url
from tests.conftest import log_in_through_pages, verified_login
from wallet.models import Account, LedgerEntry

pytestmark = pytest.mark.django_db

OBJECTS_PER_MODEL = 4
SEARCH_TERMS = ("1", "main-table", "player-1", "BANKER", "zz-nothing", "a b", "'quoted'", "9" * 30)


@pytest.fixture
def world(game, operator, integration, play, funded_account, django_capture_on_commit_callbacks):
    """Data in every state: revealed and active seed pairs, open, settled and void rounds, bets of each
    kind, adjustments, settlement batches, audit events."""
    player = funded_account("player-1", "500.00")
    other = funded_account("player-2", "300.00")
    second = game_services.game_create(actor=operator, slug="single-deck", name="Single deck", decks=1,
                                       min_bet="1.00", max_bet="100.00", tie_multiplier="10.5")
    for bet_type in ("PLAYER", "BANKER", "TIE"):
        play(bets=[(player, bet_type, "10.00"), (other, "BANKER", "5.00")])
    play(bets=[(other, "TIE", "1.00")], game_=second)
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")  # the rounds above become verifiable
    for _ in range(3):
        play(bets=[(player, "BANKER", "2.00")])
    voided = play(bets=[(other, "PLAYER", "3.00")], deal=False)
    game_services.round_void(round_id=voided.pk, actor=operator, reason="Misdeal")
    play(bets=[(player, "PLAYER", "4.00")], deal=False)  # stays OPEN: its pair cannot be revealed
    assert Round.objects.filter(status="OPEN").exists() and Round.objects.filter(status="VOID").exists()
    assert SettlementBatch.objects.exists() and SeedPair.objects.filter(revealed_at__isnull=False).exists()
    return {"games": [game, second], "accounts": [player, other]}


def secrets_of_unrevealed_pairs():
    return [pair.server_seed for pair in SeedPair.objects.filter(revealed_at__isnull=True)]


def assert_no_secret(response, secrets, url):
    # CSV exports stream their body.
    content = (b"".join(response.streaming_content) if response.streaming else response.content).decode()
    for secret in secrets:
        assert secret not in content, f"an unrevealed server seed appears on {url}"
        assert secret[:16] not in content, f"part of an unrevealed server seed appears on {url}"


def registered():
    return sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label)


def page_urls(client):
    """Every changelist, search, filter, change, history and custom page the admin has."""
    urls = [reverse("admin:index")]
    for model, model_admin in registered():
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        urls.append(reverse("admin:app_list", args=[opts.app_label]))
        urls.append(changelist)
        if model_admin.search_fields:
            urls.extend(f"{changelist}?q={term}" for term in SEARCH_TERMS)
        export = (reverse(f"admin:{opts.app_label}_{opts.model_name}_export")
                  if getattr(model_admin, "csv_export", None) else None)
        if export:
            urls.append(export)
            urls.extend(f"{export}?q={term}" for term in SEARCH_TERMS)
        response = client.get(changelist)
        if response.status_code == 200 and "cl" in response.context:
            for spec in response.context["cl"].filter_specs:
                for choice in spec.choices(response.context["cl"]):
                    urls.append(f"{changelist}{choice['query_string']}")
                    if export:
                        urls.append(f"{export}{choice['query_string']}")
        for obj in model.objects.order_by("-pk")[:OBJECTS_PER_MODEL]:
            urls.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk]))
            urls.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_history", args=[obj.pk]))
    urls.append(reverse("admin:games_gameinstance_add"))
    for game in GameInstance.objects.all():
        urls.append(admin_url(game, "rotate_seed"))
    for round_ in Round.objects.filter(status__in=["OPEN", "DEALT"]):
        urls.append(admin_url(round_, "void"))
    for account in Account.objects.all():
        urls.append(admin_url(account, "adjust"))
        urls.append(admin_url(account, "account_history"))
        urls.append(admin_url(account, "account_history") + "?check=1&bets_page=2")
    recall = reverse("admin:games_round_recall")
    urls.extend([recall, f"{recall}?game=main-table", f"{recall}?account=player-1", f"{recall}?account=player-2",
                 f"{recall}?opened_from=2000-01-01T00:00", f"{recall}?round_id=1",
                 reverse("admin:games_round_recall_export") + "?game=main-table"])
    urls.append(reverse("admin:audit_auditevent_head"))
    urls.append(admin_url(GameInstance, "rtp_preview") + "?decks=8&player=2&banker=1.95&tie=9")
    return list(dict.fromkeys(urls))


def test_every_admin_page_loads_for_the_administrator_and_hides_unrevealed_seeds(as_admin, world):
    secrets = secrets_of_unrevealed_pairs()
    assert len(secrets) == 2
    urls = page_urls(as_admin)
    assert len(urls) > 150

    for url in urls:
        response = as_admin.get(url)
        assert response.status_code == 200, (url, response.status_code)
        assert_no_secret(response, secrets, url)


def test_every_page_a_support_user_may_see_loads_and_hides_unrevealed_seeds(as_support, as_admin, world):
    secrets = secrets_of_unrevealed_pairs()
    allowed = 0
    for url in page_urls(as_admin):
        response = as_support.get(url)
        # An app index the user may see nothing of is a 404 (Django's choice); anything else a 403.
        assert response.status_code in (200, 403, 404), (url, response.status_code)
        allowed += response.status_code == 200
        assert_no_secret(response, secrets, url)
    assert allowed > 100


def test_the_regulator_opens_every_page_but_changes_nothing(as_regulator, as_admin, world):
    """Every list, change page (read-only), recall, export, report and audit page loads; every add,
    action and change page refuses a change (403 naming the permission)."""
    secrets = secrets_of_unrevealed_pairs()
    before = (SeedPair.objects.count(), list(Round.objects.values_list("pk", "status")),
              list(Account.objects.values_list("pk", "balance")), AuditEvent.objects.count())
    opened = []
    for url in page_urls(as_admin):
        response = as_regulator.get(url)
        assert response.status_code in (200, 403, 404), (url, response.status_code)
        assert_no_secret(response, secrets, url)
        if response.status_code == 200:
            opened.append(url)
            assert b'name="_save"' not in (b"" if response.streaming else response.content), url
        if response.status_code == 403:
            assert b"You may not open this page" in response.content, url
    assert len(opened) > 100
    for url in opened:
        if url.endswith("/change/"):
            assert as_regulator.post(url, {"name": "changed", "reason": "regulator"}).status_code == 403, url
    assert (SeedPair.objects.count(), list(Round.objects.values_list("pk", "status")),
            list(Account.objects.values_list("pk", "balance")), AuditEvent.objects.count()) == before


@pytest.mark.parametrize("model", [GameInstance, SeedPair, Round, Bet, AuditEvent, Account, LedgerEntry])
def test_support_sees_every_back_office_list_and_page(as_support, world, model):
    assert as_support.get(admin_url(model)).status_code == 200
    obj = model.objects.order_by("pk").first()
    assert as_support.get(admin_url(obj, "change")).status_code == 200


def test_revealed_seeds_do_show(as_support, world):
    revealed = SeedPair.objects.filter(revealed_at__isnull=False).first()

    assert revealed.server_seed in as_support.get(admin_url(revealed, "change")).content.decode()
    game_page = as_support.get(admin_url(revealed.game, "change")).content.decode()
    assert revealed.server_seed in game_page


@pytest.mark.parametrize("model, lookup", [
    (SeedPair, "server_seed__startswith"),
    (SeedPair, "server_seed"),
    (SeedPair, "server_seed__gt"),
    (Round, "seed_pair__server_seed__startswith"),
    (Bet, "round__seed_pair__server_seed__startswith"),
    (GameInstance, "seed_pairs__server_seed__startswith"),
])
def test_no_url_lookup_can_probe_a_server_seed(as_admin, world, model, lookup):
    secret = secrets_of_unrevealed_pairs()[0]

    response = as_admin.get(admin_url(model), {lookup: secret[:1]})

    assert response.status_code == 400


def test_the_server_seed_is_in_no_admin_search_or_form(world):
    for model, model_admin in registered():
        for field in getattr(model_admin, "search_fields", ()):
            assert "server_seed" not in re.split(r"__|[=^@]", field), (model, field)
        assert "server_seed" not in (model_admin.list_display or ())
        assert "server_seed" not in (getattr(model_admin, "fields", None) or ())


def test_the_search_with_a_seed_prefix_finds_nothing(as_admin, world):
    secret = secrets_of_unrevealed_pairs()[0]

    for model in (SeedPair, Round, AuditEvent):
        response = as_admin.get(admin_url(model), {"q": secret[:8]})
        assert response.status_code == 200
        assert list(response.context["cl"].result_list) == []


def test_an_integration_client_cannot_sign_in_to_the_admin(client, integration):
    response = client.post(reverse("admin:login"), {"username": "game-server", "password": "correct-horse-battery",
                                                    "next": "/admin/"})

    assert response.status_code == 200  # the form again, with an error
    assert b"staff account" in response.content
    assert client.get(reverse("admin:index")).status_code == 302


def test_staff_sign_in_with_their_password_and_second_factor(client, operator):
    log_in_through_pages(client, operator)

    assert client.get(reverse("admin:index")).status_code == 200


def test_a_user_in_no_role_sees_nothing(client, nobody):
    nobody.is_staff = True
    nobody.save()
    verified_login(client, nobody)

    response = client.get(reverse("admin:index"))

    assert response.status_code == 200
    assert response.context["app_list"] == []
    assert client.get(admin_url(Round)).status_code == 403


def test_the_operator_sees_the_back_office_but_not_staff_management(as_operator, world):
    index = as_operator.get(reverse("admin:index"))
    models = {model["object_name"] for app in index.context["app_list"] for model in app["models"]}

    assert {"GameInstance", "SeedPair", "Round", "Bet", "AuditEvent", "Account", "LedgerEntry"} <= models
    assert "User" not in models and "Group" not in models


def test_every_admin_write_needs_the_csrf_token(operator, world):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    verified_login(client, operator)
    game = world["games"][0]
    open_round = Round.objects.filter(status="OPEN").first()
    account = world["accounts"][0]
    account.refresh_from_db()
    before = (SeedPair.objects.filter(revealed_at__isnull=False).count(), open_round.status, account.balance)

    for url, data in [
        (admin_url(game, "rotate_seed"), {"client_seed": ""}),
        (admin_url(GameInstance), {"action": "rotate_seeds", "_selected_action": [game.pk], "index": "0"}),
        (admin_url(open_round, "void"), {"reason": "csrf"}),
        (admin_url(account, "adjust"), {"amount": "1", "reason": "csrf"}),
        (admin_url(SettlementBatch, "sweep"), {}),
        (admin_url(game, "change"), {"name": "x", "reason": "csrf"}),
    ]:
        assert client.post(url, data).status_code == 403, url

    open_round.refresh_from_db()
    account.refresh_from_db()
    assert (SeedPair.objects.filter(revealed_at__isnull=False).count(), open_round.status, account.balance) == before


def test_the_audit_trail_is_read_only_searchable_and_shows_the_log(as_support, as_admin, world):
    event = AuditEvent.objects.filter(action="round.voided").get()

    page = as_support.get(admin_url(event, "change")).content.decode()
    assert "pending" in page and "none yet" in page and "Misdeal" in page
    audit_sequence()
    head = audit_head_sign()
    page = as_support.get(admin_url(event, "change")).content.decode()
    assert f"tree size {head.tree_size}" in page
    by_object = as_support.get(admin_url(AuditEvent), {"q": event.object_id}).context["cl"].result_list
    assert event in by_object
    by_action = as_support.get(admin_url(AuditEvent), {"action": "round.voided"}).context["cl"].result_list
    assert list(by_action) == [event]
    by_actor = as_support.get(admin_url(AuditEvent), {"q": "olivia"}).context["cl"].result_list
    assert by_actor and all(item.actor == "olivia-operator" for item in by_actor)
    assert as_admin.post(admin_url(event, "change"), {"reason": "rewritten"}).status_code == 403
    assert as_admin.get(admin_url(event, "delete")).status_code == 403
