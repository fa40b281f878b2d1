"""The wallet's account and ledger pages, with the bets behind the ledger entries.

The wallet knows a bet only by its id; the games app knows the bets. As Django projects extend the
admins of contrib apps, this module registers subclasses of the wallet's admins in their place:
each entry's bet linked to its page, the account's bets (on its page and its history), and the
ledger export, whose rows name each bet's round.
"""

from django.contrib import admin
from django.urls import path
from django.utils.html import format_html

from backoffice.admin.exports import csv_response
from backoffice.admin.html import changelist_url, object_url, page_links
from backoffice.replica_reads import read_alias
from games import selectors
from games.admin.bet import outcome_html
from games.exports import ACCOUNT_STATEMENT_EXPORT, LEDGER_EXPORT
from games.models import Bet
from wallet import selectors as wallet_selectors
from wallet.admin import AccountAdmin, LedgerEntryAdmin
from wallet.models import Account, LedgerEntry


class LinksBetPages:
    """Each ledger entry's bet linked to its page."""

    def bet_html(self, bet_id, text):
        return format_html('<a href="{}">{}</a>', object_url(Bet, bet_id), text)


class AccountWithBetsAdmin(LinksBetPages, AccountAdmin):
    account_history_template = "admin/wallet/account/history_with_bets.html"

    def account_links(self, obj) -> list:
        return [*super().account_links(obj), (changelist_url(Bet, account__id__exact=obj.pk), "Bets")]

    def has_account_history_permission(self, request, obj=None):
        return super().has_account_history_permission(request, obj) and request.user.has_perm("games.view_bet")

    def account_history_context(self, request, account, history) -> dict:
        """The account's bets, and on each ledger row of the page its bet (``entry.bet``); each bet with
        why it won or lost (``bet.outcome_shown``)."""
        entries = [row.entry for row in history.page.object_list]
        using = read_alias(request)
        bets = selectors.bets_by_id((entry.bet_id for entry in entries if entry.bet_id), using=using)
        for entry in entries:
            entry.bet = bets.get(entry.bet_id)
        account_bets = selectors.account_bets(account=account, page=request.GET.get("bets_page", 1), using=using)
        account_bets.object_list = list(account_bets.object_list)  # evaluated once: the template shows these
        for bet in [*bets.values(), *account_bets.object_list]:
            bet.outcome_shown = outcome_html(bet)
        return {"bets": account_bets, "bet_pages": page_links(request, account_bets, "bets_page"),
                "statement_url": self.own_url("statement", account.pk)}

    def statement_view(self, request, account):
        """The whole history as one CSV: every ledger entry, oldest first, with its bet's stake and payout."""
        entries = wallet_selectors.account_ledger(account=account, using=read_alias(request)).order_by("id")
        return csv_response(ACCOUNT_STATEMENT_EXPORT, entries)

    def get_urls(self):
        return [path("<path:object_id>/statement.csv", self.object_view(
                    self.statement_view, self.has_account_history_permission, "games.view_bet"),
                     name=self.url_name("statement")),
                *super().get_urls()]


class LedgerEntryWithBetsAdmin(LinksBetPages, LedgerEntryAdmin):
    csv_export = LEDGER_EXPORT


admin.site.unregister(Account)
admin.site.register(Account, AccountWithBetsAdmin)
admin.site.unregister(LedgerEntry)
admin.site.register(LedgerEntry, LedgerEntryWithBetsAdmin)
