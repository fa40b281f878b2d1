"""Rounds and bets in the admin: read-only, cards as cards, the tableau, and voiding with a reason."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape

from audit.models import AuditEvent
from games.admin.cards import round_result
from games.choices import BetStatus, RoundStatus
from games.engine import play_round, third_card_reasons
from games.models import Bet, Round, SeedPair
from tests.admin.helpers import admin_url, snapshot

pytestmark = pytest.mark.django_db


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


# --- Display ----------------------------------------------------------------------------------------

def test_the_round_page_shows_hands_scores_outcome_and_the_tableau(as_support, play, player):
    round_ = play(bets=[(player, "BANKER", "10.00")])

    response = as_support.get(admin_url(round_, "change"))

    content = response.content.decode()
    assert response.status_code == 200
    for label in round_.cards:
        symbol = label[:-1] + {"D": "♦", "H": "♥", "S": "♠", "C": "♣"}[label[-1]]
        colour = "red" if label[-1] in "DH" else "black"
        assert f'<span class="pf-card pf-card-{colour}">{symbol}</span>' in content
    assert f"<strong>{round_.player_score}</strong>" in content
    assert f"<strong>{round_.banker_score}</strong>" in content
    assert round_.get_outcome_display() in content
    for reason in third_card_reasons(round_result(round_)):
        assert escape(reason) in content
    # The bets, inline and read-only.
    bet = Bet.objects.get(round=round_)
    assert admin_url(bet, "change") in content
    assert 'name="bets-0-stake"' not in content


def test_the_round_page_reads_the_ledger_entries_of_all_its_bets_at_once(as_support, play, player,
                                                                         funded_account):
    other = funded_account("player-2", "100.00")
    round_ = play(bets=[(player, "BANKER", "10.00"), (player, "TIE", "1.00"), (other, "PLAYER", "5.00")])

    with CaptureQueriesContext(connection) as queries:
        assert as_support.get(admin_url(round_, "change")).status_code == 200

    ledger_reads = [query for query in queries.captured_queries if '"settlement_ledgerentry"' in query["sql"]]
    assert len(ledger_reads) == 1


def test_the_tableau_of_stored_cards_is_the_engines(play):
    rounds = [play() for _ in range(25)]

    for round_ in rounds:
        pair = round_.seed_pair
        dealt = play_round(pair.server_seed, pair.client_seed, round_.nonce, round_.decks)
        assert third_card_reasons(round_result(round_)) == third_card_reasons(dealt)
        assert round_result(round_).as_dict() == dealt.as_dict()


def test_the_server_seed_shows_on_the_round_only_once_revealed(as_operator, operator, play, game):
    round_ = play()
    pair = round_.seed_pair

    before = as_operator.get(admin_url(round_, "change")).content.decode()
    assert pair.server_seed not in before
    assert "Secret until the seed pair is revealed" in before
    assert admin_url(round_, "verify") not in before

    from games import services

    services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    after = as_operator.get(admin_url(round_, "change")).content.decode()
    assert pair.server_seed in after
    assert admin_url(round_, "verify") in after  # the "Recompute by PF-1" button (tests/admin/test_recall.py)


def test_rounds_and_bets_are_read_only_for_everyone(as_admin, play, player):
    round_ = play(bets=[(player, "PLAYER", "5.00")])
    bet = Bet.objects.get(round=round_)
    before = snapshot()

    for obj in (round_, bet):
        assert as_admin.post(admin_url(obj, "change"), {"status": "VOID"}).status_code == 403
        assert as_admin.get(admin_url(obj, "delete")).status_code == 403
        assert as_admin.get(admin_url(type(obj), "add")).status_code == 403
        page = as_admin.get(admin_url(obj, "change"))
        assert page.status_code == 200 and b'name="_save"' not in page.content
    assert snapshot() == before


def test_the_round_list_shows_cards_and_filters_by_status_and_outcome(as_support, play, game):
    dealt = play()
    open_round = play(deal=False)

    page = as_support.get(admin_url(Round), {"status__exact": "OPEN"})
    assert page.status_code == 200
    assert list(page.context["cl"].result_list) == [open_round]

    page = as_support.get(admin_url(Round), {"outcome__exact": dealt.outcome})
    assert dealt in page.context["cl"].result_list and open_round not in page.context["cl"].result_list
    assert b"pf-card" in page.content


def test_the_round_list_searches_by_id_hash_and_account(as_support, play, player, funded_account):
    other = funded_account("player-2", "100.00")
    first = play(bets=[(player, "TIE", "1.00")])
    second = play(bets=[(other, "TIE", "1.00")])

    def found(term):
        return list(as_support.get(admin_url(Round), {"q": term}).context["cl"].result_list)

    assert found(str(second.pk)) == [second]
    assert found("player-1") == [first]
    assert set(found(first.seed_pair.server_seed_hash)) == {first, second}
    assert set(found("main-table")) == {first, second}
    assert found("no-such-thing") == []


def test_the_bet_list_filters_and_searches(as_support, play, player):
    round_ = play(bets=[(player, "BANKER", "10.00"), (player, "PLAYER", "3.00")])
    banker = Bet.objects.get(round=round_, bet_type="BANKER")

    page = as_support.get(admin_url(Bet), {"bet_type__exact": "BANKER"})
    assert list(page.context["cl"].result_list) == [banker]
    page = as_support.get(admin_url(Bet), {"q": "player-1"})
    assert len(page.context["cl"].result_list) == 2
    page = as_support.get(admin_url(Bet), {"q": str(round_.pk)})
    assert len(page.context["cl"].result_list) == 2  # a number matches the round id too
    page = as_support.get(admin_url(Bet), {"round__game__id__exact": round_.game_id, "status__exact": banker.status})
    assert banker in page.context["cl"].result_list


# --- Voiding ----------------------------------------------------------------------------------------

def test_the_void_action_asks_for_a_reason_then_voids_and_refunds(as_operator, operator, play, player):
    round_ = play(bets=[(player, "BANKER", "25.00")], deal=False)
    player.refresh_from_db()
    assert player.balance == Decimal("475.00")
    selection = {"action": "void_rounds", "_selected_action": [round_.pk]}

    page = as_operator.post(admin_url(Round), {**selection, "index": "0"})
    assert page.status_code == 200
    assert b'name="reason"' in page.content and b"csrfmiddlewaretoken" in page.content
    round_.refresh_from_db()
    assert round_.status == RoundStatus.OPEN

    response = as_operator.post(admin_url(Round), {**selection, "apply": "Void", "reason": "Shoe jammed"},
                                follow=True)

    round_.refresh_from_db()
    player.refresh_from_db()
    assert round_.status == RoundStatus.VOID and round_.void_reason == "Shoe jammed"
    assert player.balance == Decimal("500.00")
    assert Bet.objects.get(round=round_).status == BetStatus.REFUNDED
    event = AuditEvent.objects.get(action="round.voided")
    assert (event.actor_user, event.reason) == (operator, "Shoe jammed")
    assert any("Voided 1 round" in message for message in messages_of(response))


def test_the_void_action_without_a_reason_asks_again_and_writes_nothing(as_operator, play, player):
    round_ = play(bets=[(player, "BANKER", "25.00")], deal=False)
    before = snapshot()

    response = as_operator.post(admin_url(Round), {"action": "void_rounds", "_selected_action": [round_.pk],
                                                    "apply": "Void", "reason": "  "})

    assert response.status_code == 200
    assert response.context["form"].errors["reason"]
    assert snapshot() == before


def test_voiding_a_settled_round_is_refused_with_a_message(as_operator, play, player):
    round_ = play(bets=[(player, "BANKER", "25.00")])
    assert round_.status == RoundStatus.SETTLED
    before = snapshot()

    response = as_operator.post(admin_url(Round), {"action": "void_rounds", "_selected_action": [round_.pk],
                                                    "apply": "Void", "reason": "Too late"}, follow=True)

    assert any("not voided" in message and "SETTLED" in message for message in messages_of(response))
    assert snapshot() == before


def test_the_void_button_on_the_round_page(as_operator, play, player):
    round_ = play(bets=[(player, "TIE", "5.00")], deal=False)
    page = as_operator.get(admin_url(round_, "change"))
    assert admin_url(round_, "void").encode() in page.content

    form = as_operator.get(admin_url(round_, "void"))
    assert form.status_code == 200 and b'name="reason"' in form.content
    missing = as_operator.post(admin_url(round_, "void"), {"reason": ""})
    assert missing.status_code == 200 and missing.context["form"].errors["reason"]

    response = as_operator.post(admin_url(round_, "void"), {"reason": "Duplicate round"})

    assert response.status_code == 302 and response["Location"] == admin_url(round_, "change")
    round_.refresh_from_db()
    assert round_.status == RoundStatus.VOID
    page = as_operator.get(admin_url(round_, "change"))
    assert admin_url(round_, "void").encode() not in page.content


def test_support_cannot_void(as_support, play, player):
    round_ = play(bets=[(player, "TIE", "5.00")], deal=False)
    before = snapshot()

    assert admin_url(round_, "void").encode() not in as_support.get(admin_url(round_, "change")).content
    assert as_support.post(admin_url(round_, "void"), {"reason": "No"}).status_code == 403
    as_support.post(admin_url(Round), {"action": "void_rounds", "_selected_action": [round_.pk],
                                       "apply": "Void", "reason": "No"})

    assert snapshot() == before


def test_the_seed_pair_admin_is_read_only_and_hides_the_unrevealed_seed(as_admin, game):
    pair = SeedPair.objects.get(game=game)

    page = as_admin.get(admin_url(pair, "change"))

    assert page.status_code == 200
    assert pair.server_seed_hash in page.content.decode()
    assert pair.server_seed not in page.content.decode()
    assert as_admin.post(admin_url(pair, "change"), {"client_seed": "x"}).status_code == 403
    assert as_admin.get(admin_url(SeedPair, "add")).status_code == 403
