"""RTP policies in the admin (administrators): created and changed through the services, audited."""

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.utils.html import format_html

from backoffice.admin.base import BackOfficeAdmin
from backoffice.admin.html import changelist_url, service_error_messages
from backoffice.formatting import EMPTY
from games import services
from games.engine import REGISTRY, SIDE_BET_TYPES
from games.forms import RtpPolicyForm
from games.models import GameInstance, RtpPolicy
from games.rtp import LIMIT_FIELDS


class PolicyRejected(Exception):
    def __init__(self, errors: dict):
        super().__init__(errors)
        self.errors = errors


@admin.register(RtpPolicy)
class RtpPolicyAdmin(BackOfficeAdmin):
    form = RtpPolicyForm
    list_display = ("name", "player_limits", "banker_limits", "tie_limits", "side_bet_limits", "max_rtp", "games_link",
                    "updated_at")
    search_fields = ("name",)
    search_help_text = "Name (or part of it)."

    def get_fieldsets(self, request, obj=None):
        fieldsets = [
            (None, {"fields": ("name", "description")}),
            ("Return to player per bet, in percent (empty for no limit)",
             {"fields": (*(name for pair in LIMIT_FIELDS.values() for name in pair), "max_rtp")}),
        ]
        if obj is not None and self.has_change_permission(request, obj):
            fieldsets.append(("Reason for the change", {"fields": ("reason",)}))
        return fieldsets

    def _limits(self, obj, bet_type):
        """"97 – 99", "≥ 97", "≤ 99", or "–" when the policy does not limit the bet (percent)."""
        low, high = (getattr(obj, name) for name in LIMIT_FIELDS[bet_type])
        low, high = (None if limit is None else f"{limit.normalize():f}" for limit in (low, high))
        if low is not None and high is not None:
            return f"{low} – {high}"
        return f"≥ {low}" if low is not None else f"≤ {high}" if high is not None else EMPTY

    @admin.display(description="Player %")
    def player_limits(self, obj):
        return self._limits(obj, "PLAYER")

    @admin.display(description="Banker %")
    def banker_limits(self, obj):
        return self._limits(obj, "BANKER")

    @admin.display(description="Tie %")
    def tie_limits(self, obj):
        return self._limits(obj, "TIE")

    @admin.display(description="Side bets %")
    def side_bet_limits(self, obj):
        """Only the side bets the policy limits: seven more columns would not fit a laptop's screen."""
        limited = [f"{REGISTRY[name].label} {self._limits(obj, name)}" for name in SIDE_BET_TYPES
                   if any(getattr(obj, field) is not None for field in LIMIT_FIELDS[name])]
        return "; ".join(limited) or EMPTY

    @admin.display(description="Games")
    def games_link(self, obj):
        return format_html('<a href="{}">Games under this policy</a>',
                           changelist_url(GameInstance, rtp_policy__id__exact=obj.pk))

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)
        errors = getattr(request, "_policy_service_errors", None)
        if errors:
            return type("FormWithServiceErrors", (form,), {"service_errors": errors})
        return form

    def save_model(self, request, obj, form, change):
        try:
            if change:
                policy = services.rtp_policy_update(policy_id=obj.pk, actor=request.user,
                                                    reason=form.cleaned_data.get("reason", ""),
                                                    changes=form.configuration())
            else:
                policy = services.rtp_policy_create(actor=request.user, **form.configuration())
        except ValidationError as error:
            raise PolicyRejected(service_error_messages(error)) from error
        obj.pk = policy.pk
        obj.refresh_from_db()

    def save_related(self, request, form, formsets, change):
        pass  # the services wrote everything

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except PolicyRejected as rejected:
            request._policy_service_errors = rejected.errors
            return super().changeform_view(request, object_id, form_url, extra_context)
