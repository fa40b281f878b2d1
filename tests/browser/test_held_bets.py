"""An operator in the browser finds the bets held by a failed settlement (queue page, bets list
filtered HELD), reads the reason on the bet's page and settles it with a reason."""

import pytest
from playwright.sync_api import expect

from games.choices import BetStatus
from games.models import Bet
from tests.settlement.faults import MESSAGE, AccountFault
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry

# On PostgreSQL the fault is a trigger on the accounts table, which only the tables' owner may create.
pytestmark = [pytest.mark.browser, pytest.mark.owner]


def test_operator_finds_a_held_bet_and_settles_it(page, live_server, sign_in, shot, operator, game, play,
                                                  funded_account, monkeypatch):
    alice, carol = funded_account("alice", "100.00"), funded_account("carol", "100.00")
    fault = AccountFault(monkeypatch, carol.pk).install()
    try:
        play(game, [(alice, "BANKER", "10.00"), (carol, "PLAYER", "5.00"), (carol, "BANKER", "5.00"),
                    (carol, "TIE", "5.00")])
    finally:
        fault.remove()
    held = Bet.objects.filter(status=BetStatus.HELD).order_by("pk").first()
    assert held is not None

    sign_in(page, operator)
    page.get_by_role("link", name="Settlement batches").first.click()
    count = Bet.objects.filter(status=BetStatus.HELD).count()
    expect(page.locator("#settlement-held-bets")).to_have_text(str(count))
    shot("1-queue")
    page.locator("#settlement-held-bets a").click()
    expect(page.locator("#result_list tbody tr")).to_have_count(count)
    shot("2-held-bets")
    page.get_by_role("link", name=str(held.pk), exact=True).first.click()
    expect(page.locator("h1")).to_contain_text("View bet")
    expect(page.locator(".field-hold_reason")).to_contain_text(MESSAGE)
    shot("3-bet-page")
    page.get_by_role("link", name="Settle held bet…").click()
    expect(page.locator("h1")).to_contain_text(f"Settle held bet {held.pk}")
    page.get_by_label("Reason").fill("Account unfrozen (ticket OPS-77)")
    shot("4-settle-form")
    page.get_by_role("button", name="Settle and pay").click()
    expect(page.locator(".messagelist")).to_contain_text(f"Bet {held.pk} settled")
    expect(page.locator(".field-hold_reason")).to_contain_text(MESSAGE)  # kept as history
    expect(page.get_by_role("link", name="Settle held bet…")).to_have_count(0)
    shot("5-settled")
    held.refresh_from_db()
    assert held.status in (BetStatus.WON, BetStatus.PUSH)
    assert LedgerEntry.objects.filter(bet_id=held.pk, kind=LedgerKind.PAYOUT).count() == 1
