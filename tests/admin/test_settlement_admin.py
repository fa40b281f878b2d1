"""Accounts, the ledger and settlement batches in the admin: read-only, with balance adjustments."""

from decimal import Decimal

import pytest

from games import services as game_services
from games.models import AuditEvent, Round
from settlement.choices import LedgerKind
from settlement.models import Account, LedgerEntry, SettlementBatch
from tests.admin.helpers import admin_url, snapshot

pytestmark = pytest.mark.django_db


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


def test_the_adjust_page_credits_with_a_reason(as_operator, operator, player):
    page = as_operator.get(admin_url(player, "adjust"))
    assert page.status_code == 200 and b'name="amount"' in page.content and b'name="reason"' in page.content

    response = as_operator.post(admin_url(player, "adjust"), {"amount": "12.50", "reason": "Goodwill"})

    assert response.status_code == 302 and response["Location"] == admin_url(player, "change")
    player.refresh_from_db()
    assert player.balance == Decimal("512.50")
    entry = LedgerEntry.objects.filter(account=player).first()
    assert (entry.kind, entry.amount, entry.reason) == (LedgerKind.ADJUSTMENT, Decimal("12.50"), "Goodwill")
    event = AuditEvent.objects.filter(action="account.adjusted").first()
    assert (event.actor_user, event.reason) == (operator, "Goodwill")


@pytest.mark.parametrize("data, field", [
    ({"amount": "10", "reason": ""}, "reason"),
    ({"amount": "10", "reason": "   "}, "reason"),
    ({"amount": "0", "reason": "Nothing"}, "amount"),
    ({"amount": "1.234", "reason": "Too precise"}, "amount"),
    ({"amount": "abc", "reason": "Not a number"}, "amount"),
    ({"amount": "-500.01", "reason": "Below zero"}, "amount"),
])
def test_a_bad_adjustment_is_a_form_error_and_writes_nothing(as_operator, player, data, field):
    before = snapshot()

    response = as_operator.post(admin_url(player, "adjust"), data)

    assert response.status_code == 200
    assert response.context["form"].errors[field]
    assert snapshot() == before


def test_the_adjust_action_adjusts_each_selected_account(as_operator, player, funded_account):
    other = funded_account("player-2", "5.00")
    selection = {"action": "adjust_balance", "_selected_action": [player.pk, other.pk]}

    page = as_operator.post(admin_url(Account), {**selection, "index": "0"})
    assert page.status_code == 200 and b'name="amount"' in page.content

    response = as_operator.post(admin_url(Account), {**selection, "apply": "Adjust", "amount": "-10.00",
                                                     "reason": "Chargeback"}, follow=True)

    player.refresh_from_db()
    other.refresh_from_db()
    assert player.balance == Decimal("490.00")
    assert other.balance == Decimal("5.00")  # would go below zero: refused, named in a message
    assert any("player-2: not adjusted" in message for message in messages_of(response))


def test_support_cannot_adjust(as_support, player):
    before = snapshot()

    assert b"adjust/" not in as_support.get(admin_url(player, "change")).content
    assert as_support.get(admin_url(player, "adjust")).status_code == 403
    assert as_support.post(admin_url(player, "adjust"), {"amount": "1", "reason": "x"}).status_code == 403
    as_support.post(admin_url(Account), {"action": "adjust_balance", "_selected_action": [player.pk],
                                         "apply": "Adjust", "amount": "1", "reason": "x"})
    assert snapshot() == before


def test_the_account_page_checks_the_balance_against_the_ledger(as_support, play, player):
    play(bets=[(player, "BANKER", "10.00"), (player, "TIE", "2.00")])

    page = as_support.get(admin_url(player, "change"))

    assert page.status_code == 200
    assert "the balance equals the sum of the ledger" in page.content.decode()
    assert as_support.get(admin_url(Account), {"q": "player-1"}).context["cl"].result_list[0] == player


def test_the_ledger_is_append_only_in_the_admin(as_admin, player):
    entry = LedgerEntry.objects.filter(account=player).first()
    before = snapshot()

    assert as_admin.post(admin_url(entry, "change"), {"amount": "1000"}).status_code == 403
    assert as_admin.get(admin_url(entry, "delete")).status_code == 403
    assert as_admin.post(admin_url(entry, "delete"), {"post": "yes"}).status_code == 403
    assert as_admin.get(admin_url(LedgerEntry, "add")).status_code == 403
    response = as_admin.post(admin_url(LedgerEntry), {"action": "delete_selected", "_selected_action": [entry.pk],
                                                      "post": "yes"})
    assert response.status_code == 200  # no such action
    assert snapshot() == before


def test_the_ledger_list_filters_by_kind_and_searches_by_account(as_support, play, player, funded_account):
    other = funded_account("player-2", "50.00")
    play(bets=[(player, "BANKER", "10.00")])

    stakes = as_support.get(admin_url(LedgerEntry), {"kind__exact": "STAKE"}).context["cl"].result_list
    assert [entry.kind for entry in stakes] == ["STAKE"]
    mine = as_support.get(admin_url(LedgerEntry), {"q": "player-2"}).context["cl"].result_list
    assert {entry.account for entry in mine} == {other}
    by_account = as_support.get(admin_url(LedgerEntry), {"account__id__exact": player.pk}).context["cl"].result_list
    assert {entry.account for entry in by_account} == {player}


def test_settlement_batches_are_read_only(as_admin, play, player):
    play(bets=[(player, "BANKER", "10.00")])
    batch = SettlementBatch.objects.get()

    page = as_admin.get(admin_url(batch, "change"))
    assert page.status_code == 200
    assert admin_url(Round.objects.get(pk=batch.round_ids[0]), "change") in page.content.decode()
    assert as_admin.post(admin_url(batch, "change"), {"worker": "x"}).status_code == 403
    assert as_admin.get(admin_url(batch, "delete")).status_code == 403
    assert as_admin.get(admin_url(SettlementBatch), {"outcome__exact": "ok"}).status_code == 200


def test_the_batch_list_shows_the_queue_and_a_sweep_button(as_operator, as_support, play, player, integration):
    play(bets=[(player, "BANKER", "10.00")])
    waiting = play(bets=[(player, "PLAYER", "5.00")], deal=False)
    # Dealt, but not settled: its settlement runs on commit, and this test's transaction never commits.
    game_services.round_deal(round_id=waiting.pk, actor=integration)

    page = as_operator.get(admin_url(SettlementBatch))

    assert page.status_code == 200
    assert page.context["queue"].waiting_rounds == 1
    assert b"Settlement queue" in page.content and b"Sweep now" in page.content
    support_page = as_support.get(admin_url(SettlementBatch))
    assert support_page.status_code == 200 and b"Sweep now" not in support_page.content
    waiting_list = as_support.get(admin_url(Round), {"settlement": "waiting"}).context["cl"].result_list
    assert list(waiting_list) == [Round.objects.get(pk=waiting.pk)]


def test_the_sweep_button_settles_the_waiting_rounds(as_operator, operator, play, player, integration,
                                                     django_capture_on_commit_callbacks):
    waiting = play(bets=[(player, "PLAYER", "5.00")], deal=False)
    game_services.round_deal(round_id=waiting.pk, actor=integration)

    with django_capture_on_commit_callbacks(execute=True):
        response = as_operator.post(admin_url(SettlementBatch, "sweep"))

    assert response.status_code == 302
    waiting.refresh_from_db()
    assert waiting.status == "SETTLED"
    assert AuditEvent.objects.get(action="settlement.sweep_requested").actor_user == operator


def test_only_a_post_with_the_permission_sweeps(as_operator, as_support):
    assert as_operator.get(admin_url(SettlementBatch, "sweep")).status_code == 405
    assert as_support.post(admin_url(SettlementBatch, "sweep")).status_code == 403
    assert not AuditEvent.objects.filter(action="settlement.sweep_requested").exists()
