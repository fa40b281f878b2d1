"""Accounts and the ledger in the admin: read-only, with balance adjustments."""

from decimal import Decimal

import pytest

from audit.models import AuditEvent
from tests.admin.helpers import admin_url, snapshot
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

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
    ({"amount": "１０", "reason": "Full-width digits"}, "amount"),
    ({"amount": "1_000", "reason": "Underscores"}, "amount"),
    ({"amount": "1e3", "reason": "An exponent"}, "amount"),
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




def test_the_accounts_list_writes_balances_with_separators_and_currency(as_support, funded_account):
    funded_account("high-roller", "58131.40", currency="EUR")
    page = as_support.get(admin_url(Account)).content.decode()
    cell = page[page.index('class="field-balance_shown"'):][:80]
    assert "58,131.40 EUR" in cell
