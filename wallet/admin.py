"""Accounts and their append-only ledger in the admin (read-only).

The one write is a balance adjustment with a reason, through ``wallet.services.account_adjust``
(permission ``wallet.adjust_account``). Each account has a history page: its ledger in order with
the running balance, checked against the stored balance after each entry.

The wallet knows a bet only by its id. The games app extends these pages with the bets themselves
(``games.admin.ledger``): it registers subclasses that override the hooks marked below.
"""

from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import ValidationError
from django.db.models import Q, Sum
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.html import format_html, format_html_join

from backoffice import formatting
from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.html import (
    admin_url,
    approval_request_link,
    changelist_url,
    link,
    money,
    page_links,
    query_with,
    service_error_messages,
)
from backoffice.admin.search import matching_ids
from backoffice.approval_gate import Held, four_eyes_hint, submit
from backoffice.formatting import EMPTY, timestamp
from backoffice.replica_reads import read_alias
from backoffice.step_up import step_up_required
from core.money import money_text
from wallet import selectors, services
from wallet.choices import LedgerKind
from wallet.forms import AdjustBalanceForm
from wallet.models import Account, LedgerEntry

RECENT_LEDGER_ROWS = 10


class ShowsBetIds:
    """How a wallet page shows the bet of a ledger entry. Hook: the games app links it."""

    def bet_html(self, bet_id, text):
        return text


@admin.register(Account)
class AccountAdmin(ShowsBetIds, ReadOnlyAdmin):
    list_display = ("external_id", "balance_shown", "created_at")
    list_filter = ("currency", "created_at")
    search_fields = ("external_id",)
    search_help_text = "External player id (or part of it); a number also matches the account id."
    actions = ["adjust_balance"]
    fields = ("id", "external_id", "currency", "balance_shown", "ledger_check", "created_at", "recent_ledger",
              "related_links")
    readonly_fields = fields
    account_history_template = "admin/wallet/account/history.html"

    @admin.display(description="balance", ordering="balance")
    def balance_shown(self, obj):
        return formatting.money(obj.balance, obj.currency)

    @admin.display(description="ledger check")
    def ledger_check(self, obj):
        total = obj.ledger.aggregate(total=Sum("amount"))["total"] or 0
        if total == obj.balance:
            return format_html('<span class="pf-ok">✔ the balance equals the sum of the ledger ({})</span>',
                               money(total))
        return format_html('<span class="pf-bad">✘ the ledger sums to {}, the balance is {}</span>', money(total),
                           money(obj.balance))

    @admin.display(description="latest ledger entries")
    def recent_ledger(self, obj):
        entries = list(obj.ledger.order_by("-pk")[:RECENT_LEDGER_ROWS])
        if not entries:
            return EMPTY
        rows = format_html_join(
            "", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((link(entry, f"#{entry.pk}"), timestamp(entry.created_at), entry.get_kind_display(),
              formatting.money(entry.amount, signed=True), money(entry.balance_after),
              self.bet_html(entry.bet_id, f"bet #{entry.bet_id}") if entry.bet_id else entry.reason)
             for entry in entries),
        )
        return format_html(
            '<table class="pf-table"><thead><tr><th>Entry</th><th>When</th><th>Kind</th><th>Amount</th>'
            '<th>Balance after</th><th>Bet or reason</th></tr></thead><tbody>{}</tbody></table>', rows)

    def account_links(self, obj) -> list:
        """(url, label) of the lists that hold more of the account. Hook: the games app adds its bets."""
        return [(changelist_url(LedgerEntry, account__id__exact=obj.pk), "Whole ledger")]

    @admin.display(description="more")
    def related_links(self, obj):
        links = format_html_join(" · ", '<a href="{}">{}</a>', self.account_links(obj))
        return format_html("{} · the running balance: “Ledger history” above", links)

    # History: the ledger in order with the running balance.

    def has_account_history_permission(self, request, obj=None):
        return self.has_view_permission(request, obj) and request.user.has_perm("wallet.view_ledgerentry")

    def account_history_context(self, request, account, history) -> dict:
        """More of the history page's context. Hook: the games app adds the bets."""
        return {}

    def account_history_view(self, request, account):
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET"])
        using = read_alias(request)
        history = selectors.account_history(account=account, page=request.GET.get("page", 1), using=using)
        discrepancies = (selectors.account_ledger_discrepancies(account=account, using=using)
                         if "check" in request.GET else None)
        context = {
            **self.admin_site.each_context(request),
            "title": f"History of {account.external_id}",
            "opts": self.opts,
            "original": account,
            "history": history,
            "history_pages": page_links(request, history.page, "page"),
            "discrepancies": discrepancies,
            "check_url": query_with(request, check=1),
            **self.account_history_context(request, account, history),
            "media": self.media,
        }
        return TemplateResponse(request, self.account_history_template, context)

    # Adjustments.

    def has_adjust_account_permission(self, request, obj=None):
        return request.user.has_perm("wallet.adjust_account")

    def _adjust(self, request, account, amount, reason):
        """Adjust through the service; returns the service's errors, or None when it went through."""
        try:
            outcome = submit(services.account_adjust, external_id=account.external_id, actor=request.user,
                             amount=amount, reason=reason)
        except ValidationError as error:
            return service_error_messages(error)
        if isinstance(outcome, Held):
            self.message_user(request, format_html(
                "{}: an adjustment of {} needs a second person; sent for approval ({}).", account.external_id,
                money_text(amount, account.currency), approval_request_link(outcome.approval["id"])), messages.WARNING)
            return None
        entry = outcome.result
        self.log_change(request, account, f"Balance adjusted by {entry.amount} to {entry.balance_after}: {reason}")
        self.message_user(request, f"{account.external_id}: adjusted by {formatting.money(entry.amount, signed=True)}; "
                                   f"the balance is now {formatting.money(entry.balance_after, account.currency)}.",
                          messages.SUCCESS)
        return None

    @step_up_required
    @admin.action(description="Adjust the balance of the selected accounts…", permissions=["adjust_account"])
    def adjust_balance(self, request, queryset):
        form = AdjustBalanceForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            for account in queryset.order_by("pk"):
                errors = self._adjust(request, account, form.cleaned_data["amount"], form.cleaned_data["reason"])
                if errors:
                    text = "; ".join(" ".join(map(str, msgs)) for msgs in errors.values())
                    self.message_user(request, f"{account.external_id}: not adjusted. {text}", messages.ERROR)
            return None
        return self.action_form_response(
            request, title="Adjust balances", form=form,
            objects=[f"{a} — balance {formatting.money(a.balance, a.currency)}" for a in queryset],
            action="adjust_balance", queryset=queryset, submit_label="Adjust",
            description="The amount is added to each selected account (negative to debit) and recorded in its "
                        "ledger with the reason. A balance never goes below zero."
                        + four_eyes_hint("account.adjust"),
        )

    @step_up_required
    def adjust_view(self, request, account):
        form = AdjustBalanceForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            errors = self._adjust(request, account, form.cleaned_data["amount"], form.cleaned_data["reason"])
            if errors is None:
                return HttpResponseRedirect(admin_url(account))
            for field, field_messages in errors.items():
                form.add_error(field if field in form.fields else None, field_messages)
        return self.action_form_response(
            request, title=f"Adjust the balance of {account.external_id}", form=form, objects=[], original=account,
            details=[("Balance", formatting.money(account.balance, account.currency))], submit_label="Adjust",
            description="The amount is added to the balance (negative to debit) and recorded in the ledger with "
                        "the reason. A balance never goes below zero."
                        + four_eyes_hint("account.adjust"),
        )

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        key = quote(unquote(object_id))
        if self.has_adjust_account_permission(request):
            extra_context["adjust_url"] = self.own_url("adjust", key)
        if self.has_account_history_permission(request):
            extra_context["history_url"] = self.own_url("account_history", key)
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        return [
            path("<path:object_id>/adjust/", self.object_view(self.adjust_view, self.has_adjust_account_permission,
                                                              "wallet.adjust_account"),
                 name=self.url_name("adjust")),
            path("<path:object_id>/account-history/",
                 self.object_view(self.account_history_view, self.has_account_history_permission,
                                  "wallet.view_ledgerentry"),
                 name=self.url_name("account_history")),
            *super().get_urls(),
        ]


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ShowsBetIds, ReadOnlyAdmin):
    list_display = ("id", "created_at", "account", "kind", "amount_shown", "balance_after_shown", "bet_link", "reason")
    list_filter = ("kind", "account__currency", "created_at")
    list_select_related = ("account",)
    # What search_arms matches, in Django's notation: only adjustments carry a reason (the ledger's
    # other entries are the effects of bets), so the reason is searched among them alone, by kind.
    search_fields = ("=account__external_id", "reason")
    search_help_text = ("Account external id (exact) or the reason of an adjustment (any part of it); a number "
                        "matches the entry id or the bet id.")
    numeric_search_fields = ("bet_id",)
    change_list_template = "admin/backoffice/change_list.html"
    fields = ("id", "created_at", "account", "kind", "amount_shown", "balance_after_shown", "bet_link", "reason")
    readonly_fields = fields

    @admin.display(description="amount", ordering="amount")
    def amount_shown(self, obj):
        return formatting.money(obj.amount, obj.account.currency)

    @admin.display(description="balance after", ordering="balance_after")
    def balance_after_shown(self, obj):
        return formatting.money(obj.balance_after, obj.account.currency)

    def search_arms(self, request, term):
        return [
            Q(account_id__in=matching_ids(Account.objects.filter(external_id=term))),
            Q(kind=LedgerKind.ADJUSTMENT, reason__icontains=term),  # on ledger_kind_id_idx
        ]

    @admin.display(description="bet", ordering="bet_id")
    def bet_link(self, obj):
        if obj.bet_id is None:
            return EMPTY
        return self.bet_html(obj.bet_id, f"#{obj.bet_id}")
