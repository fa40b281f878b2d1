"""API tokens in the admin, for administrators: the list (never a token, only its visible prefix),
making one, rotating and revoking. Making and rotating answer with a page that shows the new token
once (not a message, which would travel in a cookie or the session); each needs a fresh second
factor (backoffice.step_up)."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.template.response import TemplateResponse
from django.utils import timezone

from apitokens import services
from apitokens.choices import Scope
from apitokens.models import ApiToken
from backoffice.admin.base import BackOfficeAdmin
from backoffice.step_up import step_up_required
from core.errors import Conflict


class ApiTokenForm(forms.ModelForm):
    scopes = forms.MultipleChoiceField(choices=Scope.choices, widget=forms.CheckboxSelectMultiple,
                                       initial=[Scope.READ.value],
                                       help_text="A read-only role's token (a regulator's, support's) reads only.")
    allowed_ips = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 80}),
                                  help_text="Comma-separated CIDRs the client must be in (empty: any address).")

    class Meta:
        model = ApiToken
        fields = ["owner", "label", "scopes", "expires_at", "allowed_ips"]
        help_texts = {"expires_at": "Empty: STAFF_TOKEN_DAYS for staff, never for a game server (integration)."}

    def clean_allowed_ips(self):
        try:
            return services.clean_allowed_ips(self.cleaned_data["allowed_ips"].split(","))
        except ValidationError as error:
            raise ValidationError(error.message_dict["allowed_ips"]) from None

    def clean_expires_at(self):
        expires_at = self.cleaned_data["expires_at"]
        if expires_at is not None and expires_at <= timezone.now():
            raise ValidationError("Give a time in the future.")
        return expires_at


@admin.register(ApiToken)
class ApiTokenAdmin(BackOfficeAdmin):
    form = ApiTokenForm
    list_display = ("id", "owner", "label", "prefix", "scopes_shown", "expires_at", "allowed_ips_shown",
                    "last_used_at", "enabled")
    list_filter = ("enabled",)
    search_fields = ("owner__username",)
    search_help_text = "Owner's user name."
    list_select_related = ("owner",)
    raw_id_fields = ("owner",)
    actions = ["rotate", "revoke"]

    @admin.display(description="Scopes")
    def scopes_shown(self, obj):
        return ", ".join(obj.scopes)

    @admin.display(description="Allowed addresses")
    def allowed_ips_shown(self, obj):
        return ", ".join(obj.allowed_ips) or "any"

    def has_change_permission(self, request, obj=None):
        return obj is None and request.user.has_perm("apitokens.rotate_apitoken")  # actions, no edit form

    def has_rotate_permission(self, request):
        return request.user.has_perm("apitokens.rotate_apitoken")

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in ApiToken._meta.fields] if obj is not None else []

    @step_up_required
    def add_view(self, request, form_url="", extra_context=None):
        return super().add_view(request, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data  # checked by the form as the service checks it
        token, secret = services.token_create(actor=request.user, owner=data["owner"], scopes=data["scopes"],
                                              expires_at=data["expires_at"], allowed_ips=data["allowed_ips"],
                                              label=data["label"])
        obj.pk, request.api_tokens_shown = token.pk, [(token, secret)]

    def save_related(self, request, form, formsets, change):
        pass  # the service wrote everything

    def log_addition(self, request, obj, message):
        pass  # the authentication log records it (auth.token_created)

    def response_add(self, request, obj, post_url_continue=None):
        return self._shown(request, "API token made", request.api_tokens_shown)

    @step_up_required
    @admin.action(description="Rotate: a new token beside each (the old one expires after the overlap)",
                  permissions=["rotate"])
    def rotate(self, request, queryset):
        made = []
        for token in queryset.order_by("pk"):
            try:
                made.append(services.token_rotate(token_id=token.pk, actor=request.user))
            except (ValidationError, Conflict) as error:
                self.message_user(request, f"#{token.pk}: {' '.join(sum(error.message_dict.values(), []))}",
                                  messages.ERROR)
        return self._shown(request, "API tokens rotated", made) if made else None

    @step_up_required
    @admin.action(description="Revoke: disable for good", permissions=["rotate"])
    def revoke(self, request, queryset):
        for token in queryset.order_by("pk"):
            services.token_revoke(token_id=token.pk, actor=request.user)
        self.message_user(request, f"Revoked {queryset.count()} API token(s).", messages.SUCCESS)

    def _shown(self, request, title, made):
        return TemplateResponse(request, "admin/apitokens/tokens_shown.html", {
            **self.admin_site.each_context(request), "title": title, "opts": self.opts, "made": made,
        })
