"""The account history page: bets and the ledger in order with the running balance, paginated, and a
flag on every row whose stored balance after differs from the running sum."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from games.models import Bet
from tests.admin.helpers import admin_url, snapshot
from tests.conftest import make_user, verified_login
from wallet import services
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry
from wallet.selectors import HISTORY_PER_PAGE, account_history

pytestmark = pytest.mark.django_db


def history(client, account, **params):
    response = client.get(admin_url(account, "account_history"), params)
    assert response.status_code == 200, response.status_code
    return response


def test_the_history_lists_the_ledger_oldest_first_with_the_running_balance(as_support, play, player):
    play(bets=[(player, "BANKER", "10.00"), (player, "TIE", "2.00")])
    play(bets=[(player, "PLAYER", "5.00")])

    response = history(as_support, player)

    rows = list(response.context["history"].page.object_list)
    entries = list(LedgerEntry.objects.filter(account=player).order_by("id"))
    assert [row.entry for row in rows] == entries
    running = Decimal("0")
    for row in rows:
        running += row.entry.amount
        assert row.running == running == row.entry.balance_after
        assert not row.differs
    player.refresh_from_db()
    assert rows[-1].running == player.balance
    content = response.content.decode()
    assert "pf-history-differs" not in content
    for entry in entries:
        assert f'id="entry-{entry.pk}"' in content
    # The bets, with their payouts and rounds.
    bets = list(response.context["bets"].object_list)
    assert bets == list(Bet.objects.filter(account=player).order_by("-id"))
    for bet in bets:
        assert admin_url(bet, "change") in content and admin_url(bet.round, "change") in content


def test_a_row_whose_balance_after_differs_from_the_running_sum_is_flagged(as_support, play, player):
    play(bets=[(player, "BANKER", "10.00")])
    player.refresh_from_db()
    # A bad row, as a faulty writer could have left it: 5.00 credited, but the balance after says +50.
    bad = LedgerEntry.objects.create(account=player, kind=LedgerKind.ADJUSTMENT, amount=Decimal("5.00"),
                                     balance_after=player.balance + Decimal("50.00"), reason="bad row")

    response = history(as_support, player)

    rows = response.context["history"].page.object_list
    flagged = [row for row in rows if row.differs]
    assert [row.entry for row in flagged] == [bad]
    assert flagged[0].running == player.balance + Decimal("5.00")
    assert flagged[0].difference == Decimal("45.00")
    assert response.context["history"].discrepancies == 1
    content = response.content.decode()
    assert f'class="pf-history-differs" id="entry-{bad.pk}"' in content
    assert "differs by 45.00" in content


def test_the_running_balance_carries_across_pages(as_support, player, operator):
    for number in range(HISTORY_PER_PAGE + 7):
        services.account_adjust(external_id=player.external_id, actor=operator, amount="1.00",
                                reason=f"credit {number}")
    total = LedgerEntry.objects.filter(account=player).count()
    assert total == HISTORY_PER_PAGE + 8  # the test deposit and the credits

    first = history(as_support, player)
    second = history(as_support, player, page=2)

    assert first.context["history"].page.paginator.num_pages == 2
    first_rows = list(first.context["history"].page.object_list)
    second_rows = list(second.context["history"].page.object_list)
    assert len(first_rows) == HISTORY_PER_PAGE and len(second_rows) == 8
    assert second.context["history"].opening == first_rows[-1].running
    assert all(not row.differs for row in first_rows + second_rows)
    player.refresh_from_db()
    assert second_rows[-1].running == player.balance == Decimal("557.00")
    assert "?page=2" in first.content.decode()


def test_the_whole_ledger_check_names_each_row_that_differs_and_its_page(as_support, operator, player):
    for _ in range(HISTORY_PER_PAGE + 2):
        services.account_adjust(external_id=player.external_id, actor=operator, amount="1.00", reason="credit")
    player.refresh_from_db()
    bad = LedgerEntry.objects.create(account=player, kind=LedgerKind.ADJUSTMENT, amount=Decimal("1.00"),
                                     balance_after=player.balance, reason="balance after not moved")

    clean = history(as_support, player)  # page 1 has no bad row
    assert clean.context["history"].discrepancies == 0 and clean.context["discrepancies"] is None

    checked = history(as_support, player, check=1)

    found = checked.context["discrepancies"]
    assert [item["id"] for item in found] == [bad.pk]
    assert found[0]["page"] == 2 and found[0]["running"] == player.balance + Decimal("1.00")
    assert "page 2" in checked.content.decode()


def test_an_account_with_no_entries_has_an_empty_history(as_support, funded_account):
    empty = funded_account("empty", "0")
    response = history(as_support, empty)
    assert list(response.context["history"].page.object_list) == []
    assert "No ledger entries." in response.content.decode()


def test_the_history_is_linked_from_the_account_page(as_support, player):
    url = admin_url(player, "account_history")
    assert url.encode() in as_support.get(admin_url(player, "change")).content
    page = as_support.get(admin_url(player, "change")).content.decode()
    # Two histories, two names (the page used to show two identical "History" buttons).
    assert page.count(">Ledger history</a>") == 1
    assert page.count(">Change log</a>") == 1 and admin_url(player, "history") in page
    assert ">History</a>" not in page


def test_the_history_is_read_only_and_needs_the_view_permissions(client, as_support, integration, player):
    before = snapshot()
    assert as_support.post(admin_url(player, "account_history")).status_code == 405
    assert snapshot() == before

    viewer = make_user("account-viewer", None)
    viewer.is_staff = True
    viewer.save()
    viewer.user_permissions.add(Permission.objects.get(codename="view_account"))
    verified_login(client, viewer)
    assert client.get(admin_url(player, "account_history")).status_code == 403  # no ledger permission
    assert admin_url(player, "account_history").encode() not in client.get(admin_url(player, "change")).content

    client.force_login(integration)
    response = client.get(admin_url(player, "account_history"))
    assert response.status_code == 302 and reverse("admin:login") in response["Location"]


def test_the_history_selector_reads_a_page_in_a_fixed_number_of_queries(player, operator,
                                                                       django_assert_num_queries):
    for _ in range(20):
        services.account_adjust(external_id=player.external_id, actor=operator, amount="1.00", reason="credit")

    with django_assert_num_queries(3):  # the count, the page, the sum before it
        result = account_history(account=player, page=1, per_page=10)
        list(result.page.object_list)
