"""Money in the back-office: accounts, the append-only ledger, settlement batches (all read-only).

The one write is a balance adjustment with a reason, through ``settlement.services.account_adjust``
(permission ``settlement.adjust_account``). Each account has a history page: its ledger in order
with the running balance, and its bets.
"""

from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q, Sum
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from games import exports
from games.admin import (EMPTY, ReadOnlyAdmin, admin_url, changelist_url, link, matching_ids, money,
                         service_error_messages)
from wallet.forms import AdjustBalanceForm
from games.models import Bet, Round
from settlement import selectors, services
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry
from settlement.models import SettlementBatch
from wallet import services as wallet_services, selectors as wallet_selectors
from settlement.selectors import settlement_queue

RECENT_LEDGER_ROWS = 10


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ("external_id", "currency", "balance", "created_at")
    list_filter = ("currency", "created_at")
    search_fields = ("external_id",)
    search_help_text = "External player id (or part of it); a number also matches the account id."
    show_full_result_count = False
    actions = ["adjust_balance"]
    fields = ("id", "external_id", "currency", "balance", "ledger_check", "created_at", "recent_ledger",
              "related_links")
    readonly_fields = fields

    @admin.display(description="ledger check")
    def ledger_check(self, obj):
        total = obj.ledger.aggregate(total=Sum("amount"))["total"] or 0
        if total == obj.balance:
            return format_html('<span class="pf-ok">✔ the balance equals the sum of the ledger ({})</span>',
                               money(total))
        return format_html('<span class="pf-bad">✘ the ledger sums to {}, the balance is {}</span>', money(total),
                           obj.balance)

    @admin.display(description="latest ledger entries")
    def recent_ledger(self, obj):
        entries = list(obj.ledger.select_related("bet").order_by("-pk")[:RECENT_LEDGER_ROWS])
        if not entries:
            return EMPTY
        rows = format_html_join(
            "", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((link(entry, f"#{entry.pk}"), entry.created_at.strftime("%Y-%m-%d %H:%M:%S"), entry.get_kind_display(),
              entry.amount, entry.balance_after, link(entry.bet, f"bet #{entry.bet_id}") if entry.bet_id else
              entry.reason) for entry in entries),
        )
        return format_html(
            '<table class="pf-table"><thead><tr><th>Entry</th><th>When</th><th>Kind</th><th>Amount</th>'
            '<th>Balance after</th><th>Bet or reason</th></tr></thead><tbody>{}</tbody></table>', rows)

    @admin.display(description="more")
    def related_links(self, obj):
        return format_html('<a href="{}">Whole ledger</a> · <a href="{}">Bets</a> · the running balance: '
                           '“History” above',
                           changelist_url(LedgerEntry, account__id__exact=obj.pk),
                           changelist_url(Bet, account__id__exact=obj.pk))

    # History: the ledger in order with the running balance, and the bets.

    def has_history_permission(self, request, obj=None):
        return (self.has_view_permission(request, obj) and request.user.has_perm("settlement.view_ledgerentry")
                and request.user.has_perm("games.view_bet"))

    def history_view(self, request, object_id):
        account = self.get_object(request, unquote(object_id))
        if account is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_history_permission(request, account):
            raise PermissionDenied
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET"])
        history = selectors.account_history(account=account, page=request.GET.get("page", 1))
        bets = selectors.account_bets(account=account, page=request.GET.get("bets_page", 1))
        discrepancies = (selectors.account_ledger_discrepancies(account=account)
                         if "check" in request.GET else None)
        def page_url(param, number):
            query = request.GET.copy()
            query[param] = number
            return f"?{query.urlencode()}"

        def pages(page, param):
            links = []
            if page.has_previous():
                links += [("« First", page_url(param, 1)), ("‹ Previous", page_url(param, page.previous_page_number()))]
            if page.has_next():
                links += [("Next ›", page_url(param, page.next_page_number())),
                          ("Last »", page_url(param, page.paginator.num_pages))]
            return links

        context = {
            **self.admin_site.each_context(request),
            "title": f"History of {account.external_id}",
            "opts": self.opts,
            "original": account,
            "history": history,
            "history_pages": pages(history.page, "page"),
            "bets": bets,
            "bet_pages": pages(bets, "bets_page"),
            "discrepancies": discrepancies,
            "check_url": page_url("check", 1),
            "page_of": {item["id"]: page_url("page", item["page"]) for item in discrepancies or []},
            "media": self.media,
        }
        return TemplateResponse(request, "admin/settlement/account/history.html", context)

    # Adjustments.

    def has_adjust_account_permission(self, request, obj=None):
        return request.user.has_perm("settlement.adjust_account")

    def _adjust(self, request, account, amount, reason):
        """Adjust through the service; returns the service's errors, or None when it went through."""
        try:
            entry = services.account_adjust(external_id=account.external_id, actor=request.user, amount=amount,
                                            reason=reason)
        except ValidationError as error:
            return service_error_messages(error)
        self.message_user(request, f"{account.external_id}: adjusted by {entry.amount}; the balance is now "
                                   f"{entry.balance_after} {account.currency}.", messages.SUCCESS)
        return None

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
            request, title="Adjust balances", form=form, objects=[f"{a} — balance {a.balance}" for a in queryset],
            action="adjust_balance", queryset=queryset, submit_label="Adjust",
            description="The amount is added to each selected account (negative to debit) and recorded in its "
                        "ledger with the reason. A balance never goes below zero.",
        )

    def adjust_view(self, request, object_id):
        account = self.get_object(request, unquote(object_id))
        if account is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_adjust_account_permission(request, account):
            raise PermissionDenied
        form = AdjustBalanceForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            errors = self._adjust(request, account, form.cleaned_data["amount"], form.cleaned_data["reason"])
            if errors is None:
                return HttpResponseRedirect(admin_url(account))
            for field, field_messages in errors.items():
                form.add_error(field if field in form.fields else None, field_messages)
        return self.action_form_response(
            request, title=f"Adjust the balance of {account.external_id}", form=form, objects=[], original=account,
            details=[("Balance", f"{account.balance} {account.currency}")], submit_label="Adjust",
            description="The amount is added to the balance (negative to debit) and recorded in the ledger with "
                        "the reason. A balance never goes below zero.",
        )

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        if self.has_adjust_account_permission(request):
            extra_context["adjust_url"] = reverse("admin:settlement_account_adjust", args=[quote(unquote(object_id))])
        if self.has_history_permission(request):
            extra_context["history_url"] = reverse("admin:settlement_account_account_history",
                                                   args=[quote(unquote(object_id))])
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            path("<path:object_id>/adjust/", self.admin_site.admin_view(self.adjust_view),
                 name="%s_%s_adjust" % info),
            path("<path:object_id>/account-history/", self.admin_site.admin_view(self.history_view),
                 name="%s_%s_account_history" % info),
        ] + super().get_urls()


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "created_at", "account", "kind", "amount", "balance_after", "bet_link", "reason")
    list_filter = ("kind", "account__currency", "created_at")
    list_select_related = ("account",)
    # What search_arms matches, in Django's notation: only adjustments carry a reason (the ledger's
    # other entries are the effects of bets), so the reason is searched among them alone, by kind.
    search_fields = ("=account__external_id", "reason")
    search_help_text = ("Account external id (exact) or the reason of an adjustment (any part of it); a number "
                        "matches the entry id or the bet id.")
    numeric_search_fields = ("bet_id",)
    show_full_result_count = False
    csv_export = exports.LEDGER_EXPORT
    change_list_template = "admin/backoffice/change_list.html"
    fields = ("id", "created_at", "account", "kind", "amount", "balance_after", "bet_link", "reason")
    readonly_fields = fields

    def search_arms(self, request, term):
        return [
            Q(account_id__in=matching_ids(Account.objects.filter(external_id=term))),
            Q(kind=LedgerKind.ADJUSTMENT, reason__icontains=term),  # on ledger_kind_idx
        ]

    @admin.display(description="bet", ordering="bet_id")
    def bet_link(self, obj):
        if obj.bet_id is None:
            return EMPTY
        return format_html('<a href="{}">#{}</a>', reverse("admin:games_bet_change", args=[obj.bet_id]), obj.bet_id)


@admin.register(SettlementBatch)
class SettlementBatchAdmin(ReadOnlyAdmin):
    """The settlement batches, under the state of the queue and a button that asks for a sweep."""

    list_display = ("id", "started_at", "finished_at", "worker", "outcome", "rounds", "bets", "total_staked",
                    "total_paid")
    list_filter = ("outcome", "started_at")
    search_fields = ("worker",)
    search_help_text = "Worker name (or part of it); a number matches the batch id."
    show_full_result_count = False
    fields = ("id", "worker", "outcome", "started_at", "finished_at", "rounds", "bets", "total_staked",
              "total_paid", "round_ids_shown", "error")
    readonly_fields = fields

    @admin.display(description="rounds settled")
    def round_ids_shown(self, obj):
        if not obj.round_ids:
            return EMPTY
        shown = obj.round_ids[:200]
        links = format_html_join(" ", '<a href="{}">{}</a>',
                                 ((reverse("admin:games_round_change", args=[pk]), pk) for pk in shown))
        more = len(obj.round_ids) - len(shown)
        return format_html("{} … and {} more", links, more) if more > 0 else links

    def has_request_sweep_permission(self, request):
        return request.user.has_perm("settlement.request_sweep")

    def changelist_view(self, request, extra_context=None):
        extra_context = dict(extra_context or {})
        queue = settlement_queue()
        extra_context["queue"] = queue
        extra_context["stuck_rounds_url"] = changelist_url(Round, settlement="stuck")
        extra_context["waiting_rounds_url"] = changelist_url(Round, status__exact="DEALT")
        if self.has_request_sweep_permission(request):
            extra_context["sweep_url"] = reverse("admin:settlement_settlementbatch_sweep")
        return super().changelist_view(request, extra_context)

    def sweep_view(self, request):
        if not self.has_request_sweep_permission(request):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        services.sweep_request(actor=request.user)
        self.message_user(request, "Sweep requested: the workers settle every dealt round that is waiting.",
                          messages.SUCCESS)
        return HttpResponseRedirect(changelist_url(SettlementBatch))

    def get_urls(self):
        return [
            path("sweep/", self.admin_site.admin_view(self.sweep_view), name="settlement_settlementbatch_sweep"),
        ] + super().get_urls()
