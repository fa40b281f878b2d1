"""Settlement in the admin: the batches (read-only) under the state of the queue, a button that asks
for a sweep, and the operations dashboard as a page of the site (``settlement.dashboard``)."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path
from django.utils.html import format_html, format_html_join

from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.html import changelist_url, object_url
from backoffice.admin.site import SitePage
from backoffice.formatting import EMPTY
from games.choices import RoundStatus
from games.models import Round
from settlement import dashboard, services
from settlement.models import SettlementBatch
from settlement.selectors import settlement_queue

ROUND_LINKS_SHOWN = 200


@admin.register(SettlementBatch)
class SettlementBatchAdmin(ReadOnlyAdmin):
    list_display = ("id", "started_at", "duration", "worker", "outcome", "rounds", "bets", "total_staked",
                    "total_paid")
    list_filter = ("outcome", "started_at")
    search_fields = ("worker",)
    search_help_text = "Worker name (or part of it); a number matches the batch id."
    fields = ("id", "worker", "outcome", "started_at", "finished_at", "rounds", "bets", "total_staked",
              "total_paid", "round_ids_shown", "error")
    readonly_fields = fields

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
        if self.has_request_sweep_permission(request):
            extra_context["sweep_url"] = self.own_url("sweep")
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
        return [path("sweep/", self.admin_site.admin_view(self.sweep_view), name=self.url_name("sweep")),
                *super().get_urls()]


admin.site.register_page(SitePage(
    route="dashboard/", name="dashboard", title="Operations dashboard", section="Reports",
    permission=dashboard.PERMISSION, view=dashboard.dashboard_view,
))
