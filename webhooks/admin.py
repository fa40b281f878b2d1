"""Webhooks in the admin: endpoints (secret rotation), and the delivery log with every attempt and redelivery.

Operators (and administrators) configure an integration client's endpoints here, for that client:
the owner is chosen among the active members of Integration, and is fixed once the endpoint exists.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from audit.validators import required_reason
from backoffice.admin.base import BackOfficeAdmin, ReadOnlyAdmin
from backoffice.admin.html import json_html, service_error_text
from backoffice.roles import Role
from core.errors import ApplicationError
from webhooks import services
from webhooks.choices import EventType
from webhooks.models import Delivery, DeliveryAttempt, Endpoint
from webhooks.validators import URL_MAX_LENGTH, endpoint_url_rule_text, validate_endpoint_url


class EndpointForm(forms.ModelForm):
    url = forms.CharField(max_length=URL_MAX_LENGTH, validators=[validate_endpoint_url],
                          widget=forms.TextInput(attrs={"size": 80}))
    events = forms.MultipleChoiceField(choices=EventType.choices, widget=forms.CheckboxSelectMultiple)
    # Asked when the endpoint is made (recorded in its audit event), not on later changes.
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
                             help_text="Why the endpoint is added; recorded in the audit trail.")

    class Meta:
        model = Endpoint
        fields = ["owner", "url", "events", "description", "active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["url"].help_text = endpoint_url_rule_text()  # as the settings say now
        if self.instance.pk is not None:
            del self.fields["reason"]
        if "owner" in self.fields:  # only on the add form: the owner is fixed afterwards
            self.fields["owner"].queryset = integration_clients()
            self.fields["owner"].help_text = (f"The integration client the deliveries are for (an active member "
                                              f"of {Role.INTEGRATION.group_name}).")

    def clean_reason(self):
        try:
            return required_reason(self.cleaned_data["reason"])
        except ValidationError as error:
            raise ValidationError(error.message_dict["reason"]) from None

    def clean(self):
        data = super().clean()
        owner = data.get("owner") or (self.instance.owner if self.instance.pk else None)
        if owner is not None and data.get("active") and not owner.is_active:
            self.add_error("active", f"The integration client {owner.get_username()} is deactivated: reactivate "
                                     "the user first.")
        return data


def integration_clients():
    """Who may own an endpoint: active integration clients (members of Integration without staff status)."""
    return (get_user_model().objects.filter(is_active=True, is_staff=False, is_superuser=False,
                                            groups__name=Role.INTEGRATION.group_name)
            .distinct().order_by("username"))


@admin.register(Endpoint)
class EndpointAdmin(BackOfficeAdmin):
    form = EndpointForm
    list_display = ("id", "url", "owner", "events_shown", "active", "created_at")
    list_filter = ("active",)
    search_fields = ("url",)
    search_help_text = "URL (or part of it)."
    actions = ["rotate_secret"]

    def get_readonly_fields(self, request, obj=None):
        return ("owner",) if obj is not None else ()

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        return [name for name in fields if name != "reason"] if obj is not None else fields

    @admin.display(description="Events")
    def events_shown(self, obj):
        return ", ".join(obj.events)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            services.endpoint_update(endpoint_id=obj.pk, actor=request.user,
                                     changes={name: data[name] for name in form.changed_data if name != "owner"})
            return
        endpoint, secret = services.endpoint_create(actor=request.user, owner=data["owner"], url=data["url"],
                                                    events=data["events"], reason=data["reason"],
                                                    description=data["description"], active=data["active"])
        obj.pk = endpoint.pk
        self.message_user(request, f"Signing secret of endpoint {endpoint.pk} (shown once; give it to the "
                                   f"client): {secret}", messages.WARNING)

    def save_related(self, request, form, formsets, change):
        pass  # the services wrote everything

    @admin.action(description="Rotate the signing secret (the previous one keeps signing during the overlap)",
                  permissions=["change"])
    def rotate_secret(self, request, queryset):
        for endpoint in queryset.order_by("pk"):
            secret = services.endpoint_rotate_secret(endpoint_id=endpoint.pk, actor=request.user)
            self.message_user(request, f"Endpoint {endpoint.pk}: new signing secret (shown once): {secret}",
                              messages.WARNING)


class AttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    fields = ("number", "started_at", "duration_ms", "status_code", "error", "response_excerpt")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("webhooks.view_delivery")  # the log is part of its delivery


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = ("id", "event_type", "event_id", "endpoint", "status", "attempts", "next_attempt_at",
                    "delivered_at", "last_error")
    list_filter = ("status", "event__type")
    list_select_related = ("event", "endpoint")
    search_fields = ("=event__id",)
    search_help_text = "The event id (exact)."
    fields = ("id", "event_type", "event_id", "endpoint", "status", "attempts", "next_attempt_at", "delivered_at",
              "last_error", "payload")
    readonly_fields = fields
    inlines = [AttemptInline]
    actions = ["redeliver"]

    @admin.display(description="Event")
    def event_type(self, obj):
        return obj.event.type

    @admin.display(description="Payload")
    def payload(self, obj):
        return json_html(obj.event.data)

    def has_redeliver_permission(self, request, obj=None):
        return request.user.has_perm("webhooks.change_delivery")

    @admin.action(description="Redeliver the selected deliveries", permissions=["redeliver"])
    def redeliver(self, request, queryset):
        for delivery in queryset.order_by("pk"):
            try:
                services.delivery_redeliver(delivery_id=delivery.pk, actor=request.user)
            except (ApplicationError, ValidationError) as error:
                self.message_user(request, f"Delivery {delivery.pk}: {service_error_text(error)}", messages.ERROR)
            else:
                self.message_user(request, f"Delivery {delivery.pk} will be sent again.", messages.SUCCESS)
