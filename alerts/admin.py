"""Alerts in the admin: the list (unresolved first), acknowledging and resolving with a note, and the
panel of unresolved alerts at the top of the operations dashboard."""

from django.contrib import admin, messages
from django.contrib.admin.utils import quote
from django.core.exceptions import ValidationError
from django.http import HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import path
from django.utils.html import format_html

from alerts import selectors, services
from alerts.choices import AlertStatus
from alerts.forms import NoteForm
from alerts.models import Alert
from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.html import changelist_url, json_html, object_url, service_error_text
from backoffice.formatting import EMPTY
from core.errors import Conflict


class UnresolvedFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"
    UNRESOLVED = "unresolved"

    def lookups(self, request, model_admin):
        return [(self.UNRESOLVED, "Unresolved"), *AlertStatus.choices, ("any", "Any status")]

    def value(self):
        return super().value() or self.UNRESOLVED

    def choices(self, changelist):
        for lookup, title in self.lookup_choices:
            yield {"selected": self.value() == lookup, "display": title,
                   "query_string": changelist.get_query_string({self.parameter_name: lookup})}

    def queryset(self, request, queryset):
        if self.value() == self.UNRESOLVED:
            return queryset.exclude(status=AlertStatus.RESOLVED)
        if self.value() in AlertStatus.values:
            return queryset.filter(status=self.value())
        return queryset


@admin.register(Alert)
class AlertAdmin(ReadOnlyAdmin):
    list_display = ("id", "severity", "kind", "message", "status", "first_seen", "last_seen", "times_seen")
    list_filter = (UnresolvedFilter, "severity", "kind")
    search_fields = ("key",)
    search_help_text = "The alert's key (game, day, bet…), or part of it."
    fields = ("id", "kind", "key", "severity", "status", "message", "details_shown", "first_seen", "last_seen",
              "times_seen", "acknowledged_by", "acknowledged_at", "acknowledge_note", "resolved_by", "resolved_at",
              "resolve_note", "handle")
    readonly_fields = fields

    @admin.display(description="Details")
    def details_shown(self, obj):
        return json_html(obj.details)

    @admin.display(description="Handle")
    def handle(self, obj):
        links = []
        if obj.status == AlertStatus.OPEN:
            links.append(format_html('<a class="button" href="{}">Acknowledge…</a>',
                                     self.own_url("acknowledge", quote(obj.pk))))
        if obj.status != AlertStatus.RESOLVED:
            links.append(format_html('<a class="button" href="{}">Resolve…</a>',
                                     self.own_url("resolve", quote(obj.pk))))
        return format_html(" ".join(["{}"] * len(links)), *links) if links else EMPTY

    def has_handle_alert_permission(self, request, obj=None):
        return request.user.has_perm("alerts.handle_alert")

    def _note_view(self, request, alert, *, verb, service):
        form = NoteForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                service(alert_id=alert.pk, actor=request.user, note=form.cleaned_data["note"])
            except (Conflict, ValidationError) as error:
                self.message_user(request, f"Alert #{alert.pk}: {service_error_text(error)}", messages.ERROR)
            else:
                self.message_user(request, f"Alert #{alert.pk} {verb}d.", messages.SUCCESS)
            return HttpResponseRedirect(object_url(Alert, alert.pk))
        return self.action_form_response(
            request, title=f"{verb.capitalize()} alert #{alert.pk}", form=form, objects=[], original=alert,
            details=[("Kind", alert.get_kind_display()), ("Severity", alert.get_severity_display()),
                     ("Message", alert.message)],
            submit_label=verb.capitalize(),
            description="Acknowledging says someone is on it; the alert stays on the dashboard until resolved."
            if verb == "acknowledge" else "Resolving closes this episode; if the condition comes back, a new "
                                          "alert opens.",
        )

    def acknowledge_view(self, request, alert):
        return self._note_view(request, alert, verb="acknowledge", service=services.alert_acknowledge)

    def resolve_view(self, request, alert):
        return self._note_view(request, alert, verb="resolve", service=services.alert_resolve)

    def get_urls(self):
        return [
            path("<path:object_id>/acknowledge/", self.object_view(self.acknowledge_view,
                                                                   self.has_handle_alert_permission),
                 name=self.url_name("acknowledge")),
            path("<path:object_id>/resolve/", self.object_view(self.resolve_view, self.has_handle_alert_permission),
                 name=self.url_name("resolve")),
            *super().get_urls(),
        ]


def open_alerts_panel(request) -> str:
    """The unresolved alerts, for the top of the operations dashboard."""
    if not request.user.has_perm("alerts.view_alert"):
        return ""
    alerts = selectors.alerts_unresolved()
    return render_to_string("admin/alerts/dashboard_panel.html", {
        "alerts": [(alert, object_url(Alert, alert.pk)) for alert in alerts],
        "list_url": changelist_url(Alert),
    }, request=request)


admin.site.register_dashboard_panel(open_alerts_panel)
