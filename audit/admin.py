"""The audit trail in the admin: read-only, searchable by index, under the latest signed tree head."""

import re

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.db.models import Q
from django.http import JsonResponse
from django.urls import path

from audit import selectors
from audit.choices import AUTH_ACTIONS, AuthOutcome
from audit.exports import AUDIT_EXPORT, AUTH_EXPORT
from audit.models import HASH_HEX, AuditEvent, AuditLeaf, AuthEvent
from audit.services import audit_head_sign
from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.filters import IndexedValuesFieldListFilter
from backoffice.admin.html import json_html
from backoffice.replica_reads import read_alias
from core.errors import Conflict
from dbutils import partitions

SHORT_REASON_CHARS = 60


@admin.display(description="action", ordering="action")
def action(event):
    """The action's code ("game.configured"): the name the filter, the search, the export and the API
    use, where Django would show the label of the field's choice. A function of this name, so its
    cells keep the field's CSS class (field-action)."""
    return event.action


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("id", "created_at", "actor", action, "object_type", "object_id", "short_reason", "leaf_position")
    # Both lead an index: their values are read by walking it, not by reading a million events.
    list_filter = (("action", IndexedValuesFieldListFilter), ("object_type", IndexedValuesFieldListFilter),
                   "created_at")
    # What search_arms matches, in Django's notation (each column has an index, audit.models).
    search_fields = ("=object_id", "^actor", "=request_id", "=hash", "=leaf__hash")
    search_help_text = ("Object id (exact), actor (its beginning: “olivia” finds olivia-operator, “system:” the "
                        "workers), request id, leaf hash or (older events) chain hash (exact); a number also "
                        "matches the event id.")
    csv_export = AUDIT_EXPORT
    change_list_template = "admin/audit/auditevent/change_list.html"
    fields = ("id", "created_at", "actor", "actor_user", action, "object_type", "object_id", "reason",
              "before_shown", "after_shown", "request_id", "source_ip", "leaf_position", "first_signed_head",
              "prev_hash", "hash")
    readonly_fields = fields

    def get_queryset(self, request):
        return selectors.with_log_position(super().get_queryset(request))

    @admin.display(description="leaf")
    def leaf_position(self, obj):
        """Its index in the Merkle log, or "pending" until the sequencer reaches it (within a second)."""
        return "pending" if obj.leaf_index is None else obj.leaf_index

    @admin.display(description="first signed head")
    def first_signed_head(self, obj):
        return "none yet" if obj.covered_by_head is None else f"tree size {obj.covered_by_head}"

    def search_arms(self, request, term):
        arms = [Q(object_id=term), Q(actor__startswith=term), Q(request_id=term)]
        if re.fullmatch(HASH_HEX, term):  # only a whole hash can match: no scan for any other term
            # The chain's hashes are those of the events from before the Merkle log, indexed in the
            # legacy partition alone; a leaf hash through the leaves' hash index.
            legacy_end = partitions.legacy_end(AuditEvent._meta.db_table, using=read_alias(request))
            arms += [Q(hash=term, pk__lt=legacy_end),
                     AuditLeaf.objects.filter(hash=term).values_list("event_id", flat=True)]
        return arms

    @admin.display(description="reason")
    def short_reason(self, obj):
        if len(obj.reason) <= SHORT_REASON_CHARS:
            return obj.reason
        return obj.reason[:SHORT_REASON_CHARS - 1] + "…"

    @admin.display(description="before")
    def before_shown(self, obj):
        return json_html(obj.before)

    @admin.display(description="after")
    def after_shown(self, obj):
        return json_html(obj.after)

    # The latest signed tree head, to publish outside the database.

    def head_view(self, request):
        """The head of the current log as ``audit_head`` prints it (signed now if none covers the log
        yet); ``audit_verify --against`` reads it."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            head = audit_head_sign()
        except Conflict as error:  # a stored head that does not verify holds the log's size
            return JsonResponse(error.message_dict, status=409)
        except ImproperlyConfigured as error:  # no signing key: nothing to sign with
            return JsonResponse({"AUDIT_SIGNING_KEY": [str(error)]}, status=503)
        response = JsonResponse(head.as_json())
        if "download" in request.GET:
            response["Content-Disposition"] = f'attachment; filename="audit-head-{head.tree_size}.json"'
        return response

    def changelist_tools(self, request) -> list:
        head_url = self.own_url("head")
        return [*super().changelist_tools(request),
                (f"{head_url}?download=1", "Download head (JSON)", "pf-audit-head")]

    def changelist_view(self, request, extra_context=None):
        try:
            audit_log = selectors.audit_log_status(using=read_alias(request))
        except selectors.HeadKeyMissing as error:  # the events still show, under a notice
            audit_log = {**selectors.audit_log_size(), "head": None, "key_missing": error.message}
        extra_context = {"audit_log": audit_log,
                         "audit_head_url": self.own_url("head"), **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    def get_urls(self):
        return [path("head.json", self.admin_site.admin_view(self.head_view), name=self.url_name("head")),
                *super().get_urls()]


class AuthActionFilter(admin.SimpleListFilter):
    title, parameter_name = "action", "action"

    def lookups(self, request, model_admin):
        return [(code, code) for code in AUTH_ACTIONS]

    def queryset(self, request, queryset):
        return queryset.filter(action=self.value()) if self.value() else queryset


class AuthOutcomeFilter(admin.SimpleListFilter):
    title, parameter_name = "outcome", "outcome"

    def lookups(self, request, model_admin):
        return AuthOutcome.choices

    def queryset(self, request, queryset):
        return queryset.filter(outcome=self.value()) if self.value() else queryset


@admin.register(AuthEvent)
class AuthEventAdmin(ReadOnlyAdmin):
    """The authentication log (``audit.view_authevent``): log-ins, lock-outs, refused API tokens and
    tokens made or deleted, each an audit event (its leaf and head shown)."""

    list_display = ("id", "created_at", "username", action, "outcome", "source_ip", "user_agent", "leaf_position")
    list_filter = (AuthActionFilter, AuthOutcomeFilter, "created_at")
    search_fields = ("=object_id",)
    search_help_text = "User name (exact); a number also matches the event id."
    csv_export = AUTH_EXPORT
    fields = ("id", "created_at", action, "outcome", "username", "actor", "source_ip", "user_agent", "request_id",
              "after_shown", "leaf_position", "first_signed_head")
    readonly_fields = fields
    leaf_position, first_signed_head = AuditEventAdmin.leaf_position, AuditEventAdmin.first_signed_head
    after_shown = AuditEventAdmin.after_shown

    def get_queryset(self, request):
        return selectors.with_auth_fields(selectors.with_log_position(super().get_queryset(request)))

    def search_arms(self, request, term):
        return [Q(object_id=term)]

    @admin.display(description="outcome", ordering="outcome")
    def outcome(self, obj):
        return obj.outcome

    @admin.display(description="user name")
    def username(self, obj):
        return obj.username

    @admin.display(description="user agent")
    def user_agent(self, obj):
        return obj.user_agent

    def changelist_view(self, request, extra_context=None):
        subtitle = (f"Kept at least {settings.AUTH_LOG_DAYS} days (AUTH_LOG_DAYS): these are audit events, "
                    "never deleted. No password, token or code is ever recorded.")
        return super().changelist_view(request, {"subtitle": subtitle, **(extra_context or {})})
