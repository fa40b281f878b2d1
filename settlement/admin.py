"""Settlement in the admin: the batches (read-only) under the state of the queue, a button that asks
for a sweep, the operations dashboard as a page of the site (``settlement.dashboard``), and the
settlement of held bets by an operator (on the bets' pages, which this app extends)."""

from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path
from django.utils.html import format_html, format_html_join

from audit.forms import ReasonForm
from backoffice import formatting
from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.html import admin_url, changelist_url, link, object_url, service_error_text
from backoffice.admin.site import SitePage
from backoffice.formatting import EMPTY
from core.errors import Conflict
from games.admin.bet import BetAdmin
from games.choices import BetStatus, RoundStatus
from games.models import Bet, Round
from settlement import dashboard, services
from settlement.models import SettlementBatch
from settlement.selectors import settlement_queue

ROUND_LINKS_SHOWN = 200


@admin.register(SettlementBatch)
class SettlementBatchAdmin(ReadOnlyAdmin):
    list_display = ("id", "started_at", "duration", "worker", "outcome", "rounds", "bets", "staked_shown",
                    "paid_shown")
    list_filter = ("outcome", "started_at")
    search_fields = ("worker",)
    search_help_text = "Worker name (or part of it); a number matches the batch id."
    fields = ("id", "worker", "outcome", "started_at", "finished_at", "rounds", "bets", "staked_shown",
              "paid_shown", "round_ids_shown", "error")
    readonly_fields = fields

    # Each currency's sums, never added together (a batch settles the rounds of any games).
    @admin.display(description="total staked")
    def staked_shown(self, obj):
        return self._by_currency(obj, "staked", obj.total_staked)

    @admin.display(description="total paid out")
    def paid_shown(self, obj):
        return self._by_currency(obj, "paid", obj.total_paid)

    @staticmethod
    def _by_currency(obj, name: str, plain):
        if not obj.totals:  # a batch settled before totals were kept by currency
            return EMPTY if plain is None else formatting.money(plain)
        return " · ".join(f"{sums[name]} {currency}" for currency, sums in obj.totals.items())

    @admin.display(description="took")
    def duration(self, obj):
        if obj.finished_at is None:
            return EMPTY
        return f"{(obj.finished_at - obj.started_at).total_seconds() * 1000:,.0f} ms"

    @admin.display(description="rounds settled")
    def round_ids_shown(self, obj):
        if not obj.round_ids:
            return EMPTY
        shown = obj.round_ids[:ROUND_LINKS_SHOWN]
        links = format_html_join(" ", '<a href="{}">{}</a>',
                                 ((object_url(Round, pk), pk) for pk in shown))
        more = len(obj.round_ids) - len(shown)
        return format_html("{} … and {} more", links, more) if more > 0 else links

    def has_request_sweep_permission(self, request):
        return request.user.has_perm("settlement.request_sweep")

    def changelist_view(self, request, extra_context=None):
        extra_context = dict(extra_context or {})
        extra_context["queue"] = settlement_queue()
        extra_context["stuck_rounds_url"] = changelist_url(Round, settlement="stuck")
        extra_context["waiting_rounds_url"] = changelist_url(Round, status__exact=RoundStatus.DEALT)
        extra_context["held_bets_url"] = changelist_url(Bet, status__exact=BetStatus.HELD)
        if self.has_request_sweep_permission(request):
            extra_context["sweep_url"] = self.own_url("sweep")
        return super().changelist_view(request, extra_context)

    def sweep_view(self, request):
        if not self.has_request_sweep_permission(request):
            raise PermissionDenied("settlement.request_sweep")
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        services.sweep_request(actor=request.user)
        self.message_user(request, "Sweep requested: the workers settle every dealt round that is waiting.",
                          messages.SUCCESS)
        return HttpResponseRedirect(changelist_url(SettlementBatch))

    def get_urls(self):
        return [path("sweep/", self.admin_site.admin_view(self.sweep_view), name=self.url_name("sweep")),
                *super().get_urls()]


SETTLE_HELD_DESCRIPTION = (
    "A held bet's round settled, but its own writes failed (the reason is on the bet). Settling it pays it at its "
    "round's outcome with its own multiplier, once; if its writes fail again it stays held with the new reason.")


class SettleableBetAdmin(BetAdmin):
    """The bets' admin (games.admin.bet) with the settlement of held bets, which lives in this app."""

    actions = ["settle_held_bets"]
    change_form_template = "admin/games/bet/change_form.html"

    def has_settle_held_bet_permission(self, request, obj=None):
        return request.user.has_perm("games.settle_held_bet")

    def _settle(self, request, bet, reason) -> bool:
        try:
            services.held_bet_settle(bet_id=bet.pk, actor=request.user, reason=reason)
        except (Conflict, ValidationError) as error:
            self.message_user(request, f"Bet {bet.pk} not settled. {service_error_text(error)}", messages.ERROR)
            return False
        self.log_change(request, bet, f"Held bet settled: {reason}")
        return True

    @admin.action(description="Settle selected held bets…", permissions=["settle_held_bet"])
    def settle_held_bets(self, request, queryset):
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            settled = sum(self._settle(request, bet, form.cleaned_data["reason"]) for bet in queryset.order_by("pk"))
            if settled:
                self.message_user(request, f"Settled {settled} held bet(s); their payouts are on the ledger.",
                                  messages.SUCCESS)
            return None
        return self.action_form_response(
            request, title="Settle held bets", form=form, objects=[link(bet) for bet in queryset],
            action="settle_held_bets", queryset=queryset, submit_label="Settle and pay",
            description=SETTLE_HELD_DESCRIPTION,
        )

    def settle_held_view(self, request, bet):
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            if self._settle(request, bet, form.cleaned_data["reason"]):
                self.message_user(request, f"Bet {bet.pk} settled; its payout is on the ledger.", messages.SUCCESS)
            return HttpResponseRedirect(admin_url(bet))
        return self.action_form_response(
            request, title=f"Settle held bet {bet.pk}", form=form, objects=[], original=bet,
            details=[("Status", bet.get_status_display()), ("Round", bet.round_id),
                     ("Held since", bet.held_at or EMPTY), ("Reason held", bet.hold_reason or EMPTY)],
            submit_label="Settle and pay", description=SETTLE_HELD_DESCRIPTION,
        )

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        bet = self.get_object(request, unquote(object_id))
        if bet is not None and bet.status == BetStatus.HELD and self.has_settle_held_bet_permission(request, bet):
            extra_context["settle_held_url"] = self.own_url("settle_held", quote(bet.pk))
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        return [
            path("<path:object_id>/settle-held/", self.object_view(self.settle_held_view,
                                                                    self.has_settle_held_bet_permission,
                                                                    "games.settle_held_bet"),
                 name=self.url_name("settle_held")),
            *super().get_urls(),
        ]


admin.site.unregister(Bet)
admin.site.register(Bet, SettleableBetAdmin)


admin.site.register_page(SitePage(
    route="dashboard/", name="dashboard", title="Operations dashboard", section="Reports",
    permission=dashboard.PERMISSION, view=dashboard.dashboard_view,
))
