"""Alerts in the admin: the list (unresolved first), acknowledging and resolving with a note, the
panel of unresolved alerts at the top of the operations dashboard; and the periodic tasks, whose
changes carry a reason into the audit trail."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import quote
from django.core.exceptions import ValidationError
from django.http import HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import path
from django.utils.html import format_html
from django_celery_beat.admin import PeriodicTaskAdmin, PeriodicTaskForm
from django_celery_beat.models import PeriodicTask

from alerts import schedules, selectors, services
from alerts.choices import AlertStatus
from alerts.exports import INCIDENTS_EXPORT
from alerts.forms import NoteForm
from alerts.models import Alert, Incident
from audit.validators import required_reason
from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.html import changelist_url, json_html, object_url, service_error_text
from backoffice.formatting import EMPTY
from backoffice.replica_reads import read_alias
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
              "resolve_note", "incident", "handle")
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


@admin.register(Incident)
class IncidentAdmin(ReadOnlyAdmin):
    """Incidents, newest first, each with its alerts; exported as CSV (the rows the list shows)."""

    list_display = ("id", "opened_at", "status", "cause", "restored_at", "restored_by_shown", "alert_count")
    list_filter = ("status",)
    fields = ("id", "opened_at", "cause", "status", "restored_at", "restored_by_shown", "alerts_shown")
    readonly_fields = fields
    csv_export = INCIDENTS_EXPORT

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("alerts")

    @admin.display(description="Restored by", ordering="restored_by_actor")
    def restored_by_shown(self, obj):  # the actor as the audit trail names it, under a heading people read
        return obj.restored_by_actor or EMPTY

    @admin.display(description="Alerts")
    def alert_count(self, obj):
        return len(obj.alerts.all())

    @admin.display(description="Alerts in it")
    def alerts_shown(self, obj):
        alerts = sorted(obj.alerts.all(), key=lambda alert: (alert.first_seen, alert.pk))
        if not alerts:
            return EMPTY
        return format_html("<br>".join(["{}"] * len(alerts)), *(
            format_html('<a href="{}">#{}</a> {} ({}), {}', object_url(Alert, alert.pk), alert.pk,
                        alert.get_kind_display(), alert.get_status_display(), alert.message) for alert in alerts))


class AuditedPeriodicTaskForm(PeriodicTaskForm):
    """django_celery_beat's form with the reason every change carries, refusing what would switch off
    a task the audit log or the alerts depend on (alerts.schedules)."""

    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
                             help_text="Why the task changes; recorded in the audit trail with the change.")

    def clean_reason(self):
        return required_reason(self.cleaned_data.get("reason"))

    def _post_clean(self):
        super()._post_clean()  # the instance as it would be saved
        if not self.errors:
            before = PeriodicTask.objects.filter(pk=self.instance.pk).first() if self.instance.pk else None
            refused = schedules.refusal(before, self.instance)
            if refused:
                self.add_error("enabled" if "enabled" in self.fields else None, refused)


admin.site.unregister(PeriodicTask)


@admin.register(PeriodicTask)
class AuditedPeriodicTaskAdmin(PeriodicTaskAdmin):
    """Periodic tasks: each change saved with its reason and audit event (alerts.services); no bulk
    enable, disable or toggle (they would carry no reason) and no deletion (disable a task instead)."""

    form = AuditedPeriodicTaskForm
    actions = ("run_tasks",)
    fieldsets = (*PeriodicTaskAdmin.fieldsets, ("Reason", {"fields": ("reason",)}))

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        services.periodic_task_save(task=obj, actor=request.user, reason=form.cleaned_data["reason"])


def open_alerts_panel(request) -> str:
    """The unresolved alerts, for the top of the operations dashboard."""
    if not request.user.has_perm("alerts.view_alert"):
        return ""
    alerts = selectors.alerts_unresolved(using=read_alias(request))
    return render_to_string("admin/alerts/dashboard_panel.html", {
        "alerts": [(alert, object_url(Alert, alert.pk)) for alert in alerts],
        "list_url": changelist_url(Alert),
    }, request=request)


admin.site.register_dashboard_panel(open_alerts_panel)
