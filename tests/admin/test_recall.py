"""Round recall for support: finding rounds, the round page (positions, bets with payouts and ledger
entries, seeds and nonce) and the "Recompute by PF-1" button."""

import re
from datetime import timedelta
from decimal import Decimal
from html import unescape

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from backoffice.roles import Role
from games import services as game_services
from games.admin.cards import dealt_positions
from games.engine import REGISTRY, play_round, round_events
from games.models import Bet, Round
from tests.admin.helpers import admin_url, snapshot
from tests.conftest import make_user, verified_login
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry

pytestmark = pytest.mark.django_db

RECALL = reverse("admin:games_round_recall")


def found(client, **criteria):
    response = client.get(RECALL, criteria)
    assert response.status_code == 200, response.status_code
    assert response.context["form"].is_valid(), response.context["form"].errors
    return [row["round"] for row in response.context["rows"]]


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


# --- Finding rounds ---------------------------------------------------------------------------------

def test_recall_finds_rounds_by_id_account_game_and_time(as_support, operator, play, player, funded_account):
    other = funded_account("player-2", "100.00")
    second_game = game_services.game_create(actor=operator, slug="side-table", name="Side", min_bet="1.00",
                                            max_bet="100.00")
    first = play(bets=[(player, "BANKER", "10.00"), (player, "TIE", "1.00")])
    second = play(bets=[(other, "PLAYER", "5.00")])
    third = play(bets=[(player, "PLAYER", "2.00")], game_=second_game)
    Round.objects.filter(pk=first.pk).update(opened_at=timezone.now() - timedelta(days=3))

    assert found(as_support, round_id=second.pk) == [second]
    # Two bets of player-1 on the first round: listed once.
    assert found(as_support, account="player-1") == [third, first]
    assert found(as_support, account="player-2") == [second]
    assert found(as_support, game="side-table") == [third]
    recent = timezone.now() - timedelta(days=1)
    assert found(as_support, opened_from=recent.strftime("%Y-%m-%dT%H:%M")) == [third, second]
    assert found(as_support, opened_to=recent.strftime("%Y-%m-%dT%H:%M")) == [first]
    # Criteria combine.
    assert found(as_support, account="player-1", game="main-table") == [first]
    assert found(as_support, account="player-2", game="side-table") == []
    assert found(as_support, account="nobody-at-all") == []


def test_recall_lists_each_round_with_its_bets_and_links_to_the_round_page(as_support, play, player):
    round_ = play(bets=[(player, "BANKER", "10.00"), (player, "TIE", "1.50")])

    response = as_support.get(RECALL, {"account": "player-1"})

    row = response.context["rows"][0]
    currency = round_.game.currency  # the amounts carry it: recall lists rounds of games in several
    assert (row["round"].bet_count, row["staked"]) == (2, f"11.50 {currency}")
    paid = sum(bet.payout for bet in Bet.objects.filter(round=round_))
    assert row["paid"] == f"{paid:,.2f} {currency}"
    assert admin_url(round_, "change") in response.content.decode()
    assert b"pf-card" in response.content


def test_recall_pages_through_many_matches_without_counting(as_support, play, django_assert_max_num_queries):
    rounds = [play(deal=False) for _ in range(55)]
    newest_first = sorted(rounds, key=lambda round_: -round_.pk)

    with django_assert_max_num_queries(9):  # 8, and the second-factor devices (backoffice.staff_sessions)
        first_page = as_support.get(RECALL, {"game": "main-table"})
    assert [row["round"] for row in first_page.context["rows"]] == newest_first[:50]
    assert first_page.context["next_url"] and first_page.context["previous_url"] is None
    second_page = as_support.get(RECALL + first_page.context["next_url"])
    assert [row["round"] for row in second_page.context["rows"]] == newest_first[50:]
    assert second_page.context["next_url"] is None and second_page.context["previous_url"]


@pytest.mark.parametrize("criteria, field", [
    ({}, "__all__"),
    ({"round_id": "abc"}, "round_id"),
    ({"round_id": "0"}, "round_id"),
    ({"game": "no-such-game"}, "game"),
    ({"opened_from": "yesterday"}, "opened_from"),
    ({"opened_from": "2026-01-02T00:00", "opened_to": "2026-01-01T00:00"}, "opened_to"),
])
def test_recall_explains_a_bad_search(as_support, play, criteria, field):
    play()
    response = as_support.get(RECALL, {"account": "", **criteria})

    assert response.status_code == 200
    assert response.context["form"].errors[field]
    assert response.context["results"] is None


def test_recall_is_linked_from_the_index_and_the_round_list(as_support):
    assert RECALL.encode() in as_support.get(reverse("admin:index")).content
    assert RECALL.encode() in as_support.get(admin_url(Round)).content


def test_recall_needs_the_view_permission(client, integration, nobody, play):
    play()
    nobody.is_staff = True
    nobody.save()
    verified_login(client, nobody)
    assert client.get(RECALL, {"game": "main-table"}).status_code == 403
    assert RECALL.encode() not in client.get(reverse("admin:index")).content

    # An integration client is no staff member: the admin sends it to the log-in page.
    client.force_login(integration)
    response = client.get(RECALL, {"game": "main-table"})
    assert response.status_code == 302 and reverse("admin:login") in response["Location"]


# --- The round page ---------------------------------------------------------------------------------

def test_the_round_page_shows_each_bet_with_its_payout_and_ledger_entries(as_support, play, player):
    round_ = play(bets=[(player, "BANKER", "10.00"), (player, "PLAYER", "4.00")])

    page = as_support.get(admin_url(round_, "change"))

    assert page.status_code == 200
    content = re.sub(r"\s+", " ", page.content.decode())
    rows = {int(match.group(1)): match.group(0)
            for match in re.finditer(r'<tr[^>]*>(?:(?!</tr>).)*?/admin/games/bet/(\d+)/change/.*?</tr>', content)}
    bets = list(Bet.objects.filter(round=round_))
    assert set(rows) == {bet.pk for bet in bets}
    for bet in bets:
        row = rows[bet.pk]
        assert bet.payout is not None
        assert f'<td class="field-payout_shown"> <p>{bet.payout} USD</p> </td>' in row
        entries = list(LedgerEntry.objects.filter(bet_id=bet.pk).order_by("pk"))
        # A stake for every bet; a payout entry (or a refund for a push) when it returned money.
        assert entries[0].kind == LedgerKind.STAKE and entries[0].amount == -bet.stake
        assert len(entries) == (2 if bet.payout > 0 else 1)
        for entry in entries:
            assert admin_url(entry, "change") in row
            assert f"{entry.get_kind_display()}</a> {entry.amount} → balance {entry.balance_after}" in row


def test_the_round_page_shows_the_seed_pair_nonce_and_card_positions(as_support, play):
    round_ = play()
    pair = round_.seed_pair

    content = as_support.get(admin_url(round_, "change")).content.decode()

    assert pair.server_seed_hash in content and pair.client_seed in content
    assert admin_url(pair, "change") in content
    assert f'<div class="readonly">{round_.nonce}</div>' in content
    positions = dealt_positions(round_)
    assert [label for _, _, label in positions] == round_.cards
    assert [label for _, hand, label in positions if hand == "Player"] == round_.player_cards
    assert [label for _, hand, label in positions if hand == "Banker"] == round_.banker_cards
    for position, hand, _label in positions:
        assert f'<span class="pf-position">{position}</span> {hand}' in content


@pytest.mark.parametrize("cards, player, banker, hands", [
    (["2H", "3S", "4D", "5C"], ["2H", "4D"], ["3S", "5C"], "PBPB"),
    (["2H", "3S", "4D", "5C", "6H"], ["2H", "4D", "6H"], ["3S", "5C"], "PBPBP"),
    (["2H", "3S", "4D", "5C", "6H"], ["2H", "4D"], ["3S", "5C", "6H"], "PBPBB"),
    (["2H", "3S", "4D", "5C", "6H", "7S"], ["2H", "4D", "6H"], ["3S", "5C", "7S"], "PBPBPB"),
])
def test_card_positions_follow_the_deal_order_for_every_drawing_pattern(cards, player, banker, hands):
    round_ = Round(cards=cards, player_cards=player, banker_cards=banker)

    positions = dealt_positions(round_)

    assert [position for position, _, _ in positions] == list(range(1, len(cards) + 1))
    assert "".join(hand[0] for _, hand, _ in positions) == hands
    assert [label for _, _, label in positions] == cards


# --- Recompute by PF-1 ----------------------------------------------------------------------------

@pytest.fixture
def revealed_round(play, player, game, operator):
    round_ = play(bets=[(player, "BANKER", "10.00")])
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    round_.refresh_from_db()
    return round_


def test_support_recomputes_a_revealed_round_and_sees_it_match(as_support, revealed_round):
    page = as_support.get(admin_url(revealed_round, "change")).content.decode()
    assert admin_url(revealed_round, "verify") in page and "Recompute by PF-1" in page
    before = snapshot()

    response = as_support.get(admin_url(revealed_round, "verify"))

    assert response.status_code == 200
    assert response.context["verification"]["verified"] is True
    content = response.content.decode()
    assert "✔ Matches" in content
    assert revealed_round.seed_pair.server_seed in content
    assert any("matches the stored round" in message for message in messages_of(response))
    assert snapshot() == before  # recomputing writes nothing


def test_a_tampered_round_does_not_match(as_support, revealed_round):
    stored = revealed_round.outcome
    other = "PLAYER" if stored != "PLAYER" else "BANKER"
    Round.objects.filter(pk=revealed_round.pk).update(outcome=other)

    response = as_support.get(admin_url(revealed_round, "verify"))

    assert response.status_code == 200
    verification = response.context["verification"]
    assert verification["verified"] is False and verification["mismatches"] == ["outcome"]
    assert "Does not match" in response.content.decode()
    assert any("does NOT match" in message for message in messages_of(response))


def test_an_unrevealed_round_is_not_recomputed_and_shows_no_button(as_support, play):
    round_ = play()
    page = as_support.get(admin_url(round_, "change")).content.decode()
    assert admin_url(round_, "verify") not in page
    assert "Possible once the seed pair is revealed" in page

    response = as_support.get(admin_url(round_, "verify"), follow=True)

    assert response.redirect_chain[-1][0] == admin_url(round_, "change")
    assert any("not verified" in message and "not revealed" in message for message in messages_of(response))
    assert round_.seed_pair.server_seed not in response.content.decode()


def test_a_voided_round_of_a_revealed_pair_has_nothing_to_verify(as_support, operator, play, game):
    round_ = play(deal=False)
    game_services.round_void(round_id=round_.pk, actor=operator, reason="Misdeal")
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")

    page = as_support.get(admin_url(round_, "change")).content.decode()
    assert admin_url(round_, "verify") not in page and "nothing to verify" in page
    response = as_support.get(admin_url(round_, "verify"), follow=True)
    assert any("never dealt" in message for message in messages_of(response))


def test_recompute_is_a_page_that_can_be_linked_and_reloaded(support, revealed_round):
    client = Client(enforce_csrf_checks=True)
    verified_login(client, support)
    url = admin_url(revealed_round, "verify")

    first, again = client.get(url), client.get(url)  # a link, a reload: the same page, nothing written
    for response in (first, again):
        assert response.status_code == 200 and response.context["verification"]["verified"] is True
    assert client.post(url).status_code in (403, 405)  # nothing to post: no CSRF token, no method


def test_recompute_needs_the_verify_permission(client, revealed_round):
    viewer = make_user("view-only", None)
    viewer.is_staff = True
    viewer.save()
    viewer.user_permissions.add(Permission.objects.get(codename="view_round"))
    verified_login(client, viewer)

    page = client.get(admin_url(revealed_round, "change"))
    assert page.status_code == 200 and admin_url(revealed_round, "verify").encode() not in page.content
    assert client.get(admin_url(revealed_round, "verify")).status_code == 403


def test_support_cannot_change_a_round_but_can_recall_and_verify_it(as_support, revealed_round):
    before = snapshot()
    assert as_support.post(admin_url(revealed_round, "change"), {"status": "VOID"}).status_code == 403
    assert as_support.post(admin_url(revealed_round, "void"), {"reason": "no"}).status_code == 403
    assert found(as_support, round_id=revealed_round.pk) == [revealed_round]
    assert as_support.get(admin_url(revealed_round, "verify")).status_code == 200
    assert snapshot() == before


def test_every_role_with_staff_access_and_the_permission_may_verify(revealed_round):
    for role in (Role.OPERATOR, Role.SUPPORT, Role.ADMIN):
        client = Client()
        verified_login(client, make_user(f"user-{role.value}", role))
        response = client.get(admin_url(revealed_round, "verify"))
        assert response.status_code == 200 and response.context["verification"]["verified"], role


def test_the_bet_page_lists_the_same_ledger_entries(as_support, play, player):
    round_ = play(bets=[(player, "TIE", "2.00")])
    bet = Bet.objects.get(round=round_)
    stake = LedgerEntry.objects.get(bet_id=bet.pk, kind=LedgerKind.STAKE)

    content = as_support.get(admin_url(bet, "change")).content.decode()

    assert stake.amount == Decimal("-2.00")
    assert f"{stake.amount} → balance {stake.balance_after}" in content


def test_the_support_pages_load_the_back_office_styles(as_support, revealed_round, player):
    pages = [
        as_support.get(RECALL, {"round_id": revealed_round.pk}),
        as_support.get(admin_url(revealed_round, "verify")),
        as_support.get(admin_url(player, "account_history")),
    ]
    for page in pages:
        assert page.status_code == 200
        assert "backoffice/admin.css" in page.content.decode()  # the cards as cards need it


# --- Exporting what the recall found --------------------------------------------------------------

RECALL_EXPORT = reverse("admin:games_round_recall_export")


def test_recall_exports_every_round_it_finds_across_pages(as_support, play, player, funded_account):
    other = funded_account("player-2", "100.00")
    wanted = [play(bets=[(player, "TIE", "1.00")], deal=False) for _ in range(53)]
    play(bets=[(other, "TIE", "1.00")], deal=False)

    page = as_support.get(RECALL, {"account": "player-1"})
    link = page.context["export_url"]
    assert link == f"{RECALL_EXPORT}?account=player-1" and link in page.content.decode()
    response = as_support.get(link)

    assert response.status_code == 200 and response.streaming
    rows = b"".join(response.streaming_content).decode().splitlines()
    assert rows[0].startswith("round_id,game,status")
    assert [int(line.split(",")[0]) for line in rows[1:]] == sorted((r.pk for r in wanted), reverse=True)


def test_recall_export_of_a_bad_search_goes_back_to_the_form(as_support):
    response = as_support.get(RECALL_EXPORT, {"round_id": "abc"})
    assert response.status_code == 302 and response["Location"] == f"{RECALL}?round_id=abc"


def test_recall_export_needs_the_view_permission(client, nobody, play):
    play()
    nobody.is_staff = True
    nobody.save()
    verified_login(client, nobody)
    assert client.get(RECALL_EXPORT, {"game": "main-table"}).status_code == 403


def test_a_matching_round_shows_every_bet_types_event_on_its_deal(as_support, revealed_round):
    pair = revealed_round.seed_pair
    dealt = play_round(pair.server_seed, pair.client_seed, revealed_round.nonce, revealed_round.decks)

    response = as_support.get(admin_url(revealed_round, "verify"))

    content = response.content.decode()
    assert "Every bet type on this deal" in content
    table = re.search(r'<table[^>]*id="bet-events".*?</table>', content, re.S).group(0)
    rows = re.findall(r'<tr data-bet-type="([A-Z_]+)"><th scope="row">(.*?)</th><td>(.*?)</td></tr>', table)
    assert [(name, unescape(label)) for name, label, _event in rows] == [
        (name, kind.label) for name, kind in REGISTRY.items()]
    shown = {bet["bet_type"]: bet["event"] for bet in response.context["bet_events"]}
    assert shown == dict(round_events(dealt))
    assert [event for _name, _label, event in rows] == [
        bet["event_label"] for bet in response.context["bet_events"]]


def test_a_round_that_does_not_match_shows_no_bet_events(as_support, revealed_round):
    Round.objects.filter(pk=revealed_round.pk).update(outcome="TIE" if revealed_round.outcome != "TIE" else "PLAYER")

    response = as_support.get(admin_url(revealed_round, "verify"))

    assert response.context["bet_events"] is None
    assert "Every bet type on this deal" not in response.content.decode()
