"""Held bets in the admin: findable (status filter, queue, dashboard), the reason on the bet's and the
round's pages, and settled by an operator with a reason (button or list action); support only reads."""

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

from audit.models import AuditEvent
from games.choices import BetStatus
from games.models import Bet
from settlement.models import SettlementBatch
from tests.admin.helpers import admin_url
from tests.settlement.faults import MESSAGE, held_round  # noqa: F401
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry

# On PostgreSQL the fault is a trigger on the accounts table, which only the tables' owner may create.
pytestmark = [pytest.mark.django_db, pytest.mark.owner]


def held_bets():
    return list(Bet.objects.filter(status=BetStatus.HELD).order_by("pk"))


def test_held_bets_are_findable_with_their_reason(as_support, held_round):  # noqa: F811
    held = held_bets()
    listed = as_support.get(admin_url(Bet), {"status__exact": "HELD"}).context["cl"].result_list
    assert list(listed) == held[::-1]
    page = as_support.get(admin_url(held[0], "change")).content.decode()
    assert MESSAGE in page and "Settle held bet" not in page
    assert MESSAGE in as_support.get(admin_url(held_round["round"], "change")).content.decode()
    queue = as_support.get(admin_url(SettlementBatch)).content.decode()
    assert 'id="settlement-held-bets"' in queue and "status__exact=HELD" in queue
    assert as_support.get(admin_url(Bet, "settle_held", held[0].pk)).status_code == 403
    assert as_support.post(admin_url(Bet, "settle_held", held[0].pk), {"reason": "x"}).status_code == 403
    assert Bet.objects.get(pk=held[0].pk).status == BetStatus.HELD


def test_an_operator_settles_a_held_bet_from_its_page(as_operator, held_round):  # noqa: F811
    bet = held_bets()[0]
    page = as_operator.get(admin_url(bet, "change")).content.decode()
    settle_url = admin_url(Bet, "settle_held", bet.pk)
    assert settle_url in page
    # While the fault remains: an error message, the bet still held.
    response = as_operator.post(settle_url, {"reason": "retry"}, follow=True)
    assert any(MESSAGE in str(message) for message in response.context["messages"])
    assert Bet.objects.get(pk=bet.pk).status == BetStatus.HELD
    assert as_operator.post(settle_url, {"reason": ""}).status_code == 200  # the form again, nothing written
    assert Bet.objects.get(pk=bet.pk).status == BetStatus.HELD
    held_round["fault"].remove()
    response = as_operator.post(settle_url, {"reason": "unfrozen"}, follow=True)
    assert [str(message) for message in response.context["messages"]] == [
        f"Bet {bet.pk} settled; its payout is on the ledger."]
    assert Bet.objects.get(pk=bet.pk).status in (BetStatus.WON, BetStatus.PUSH)
    assert settle_url not in as_operator.get(admin_url(bet, "change")).content.decode()
    assert AuditEvent.objects.filter(action="settlement.held_bet_settled", reason="unfrozen").count() == 1


def test_an_operator_settles_the_selected_held_bets(as_operator, held_round):  # noqa: F811
    held_round["fault"].remove()
    held = held_bets()
    selected = {"action": "settle_held_bets", ACTION_CHECKBOX_NAME: [bet.pk for bet in held]}
    form = as_operator.post(admin_url(Bet), selected)
    assert form.status_code == 200 and b"Settle and pay" in form.content
    response = as_operator.post(admin_url(Bet), {**selected, "apply": "1", "reason": "unfrozen"}, follow=True)
    assert f"Settled {len(held)} held bet(s)" in " ".join(str(m) for m in response.context["messages"])
    assert not Bet.objects.filter(status=BetStatus.HELD).exists()
    for bet in held:
        assert LedgerEntry.objects.filter(bet_id=bet.pk, kind=LedgerKind.PAYOUT).count() == 1
