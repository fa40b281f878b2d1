"""The four-eyes queue in the admin: each request with its diff (and, for a game, the exact return to
player before and after), approved or rejected with a reason by a second person."""

from django.contrib import admin, messages
from django.contrib.admin.utils import quote
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.urls import path
from django.utils.html import format_html, format_html_join

from approvals import selectors, services
from approvals.choices import ApprovalAction, ApprovalStatus
from approvals.models import Approval
from audit.forms import ReasonForm
from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.html import object_url, service_error_text
from backoffice.formatting import EMPTY
from core.errors import Conflict
from games.forms import rtp_preview
from games.models import GameInstance, Round
from wallet.models import Account

OBJECT_MODELS = {"gameinstance": GameInstance, "round": Round, "account": Account}


class StatusFilter(admin.SimpleListFilter):
    """By status as of now (a pending request past its expiry is expired); the queue shows pending ones first."""

    title = "status"
    parameter_name = "status"
    ANY = "any"

    def lookups(self, request, model_admin):
        return [*ApprovalStatus.choices, (self.ANY, "Any status")]

    def value(self):
        return super().value() or ApprovalStatus.PENDING

    def choices(self, changelist):
        for lookup, title in self.lookup_choices:
            yield {"selected": self.value() == lookup, "display": title,
                   "query_string": changelist.get_query_string({self.parameter_name: lookup})}

    def queryset(self, request, queryset):
        if self.value() in ApprovalStatus.values:
            return queryset.filter(pk__in=selectors.approval_list(filters={"status": self.value()}).values("pk"))
        return queryset


def _value(value) -> str:
    return EMPTY if value in (None, "") else str(value)


@admin.register(Approval)
class ApprovalAdmin(ReadOnlyAdmin):
    list_display = ("id", "action", "object_link", "status_shown", "summary", "proposed_by", "proposed_at",
                    "expires_at", "decided_by")
    list_filter = (StatusFilter, "action")
    list_select_related = ("proposed_by", "decided_by")
    fields = ("id", "action", "object_link", "status_shown", "diff", "rtp_before_after", "reason", "proposed_by",
              "proposed_at", "expires_at", "decided_by", "decided_at", "decision_reason", "decide")
    readonly_fields = fields

    # Displays.

    @admin.display(description="Status")
    def status_shown(self, obj):
        return ApprovalStatus(obj.current_status).label

    @admin.display(description="Object")
    def object_link(self, obj):
        model = OBJECT_MODELS[obj.object_type]
        return format_html('<a href="{}">{} {}</a>', object_url(model, obj.object_id), model._meta.verbose_name,
                           obj.object_id)

    @admin.display(description="Change")
    def summary(self, obj):
        parts = []
        for name, value in obj.changes.items():
            if isinstance(value, dict):
                parts.append(f"{name}: {_value(value.get('before'))} → {_value(value.get('after'))}")
            else:
                parts.append(f"{name}: {_value(value)}")
        return "; ".join(parts)

    @admin.display(description="Diff")
    def diff(self, obj):
        rows = []
        for name, value in obj.changes.items():
            before, after = (value.get("before"), value.get("after")) if isinstance(value, dict) else ("", value)
            rows.append((name.replace("_", " "), _value(before), _value(after)))
        return format_html(
            '<table class="pf-table pf-diff"><thead><tr><th>Field</th><th>Before</th><th>After</th></tr></thead>'
            "<tbody>{}</tbody></table>",
            format_html_join("", "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td></tr>", rows),
        )

    @admin.display(description="Return to player (exact), before → after")
    def rtp_before_after(self, obj):
        if obj.action != ApprovalAction.GAME_UPDATE:
            return EMPTY
        game = GameInstance.objects.filter(pk=obj.object_id).first()
        if game is None:
            return EMPTY
        fields = ("decks", "player_multiplier", "banker_multiplier", "tie_multiplier")
        before = {name: obj.changes.get(name, {}).get("before", getattr(game, name)) for name in fields}
        after = {name: obj.changes.get(name, {}).get("after", before[name]) for name in fields}
        previews = [rtp_preview(decks=values["decks"], player=values["player_multiplier"],
                                banker=values["banker_multiplier"], tie=values["tie_multiplier"])
                    for values in (before, after)]
        if not all(preview["ok"] for preview in previews):
            return EMPTY
        rows = [(b["label"], b["rtp"], b["rtp_exact"], a["rtp"], a["rtp_exact"])
                for b, a in zip(previews[0]["bets"], previews[1]["bets"], strict=True)]
        return format_html(
            '<table class="pf-table pf-rtp-diff"><thead><tr><th>Bet</th><th>Before</th><th>After</th></tr></thead>'
            "<tbody>{}</tbody></table>",
            format_html_join("", '<tr><th scope="row">{}</th><td>{} % <small>({})</small></td>'
                                 "<td>{} % <small>({})</small></td></tr>", rows),
        )

    @admin.display(description="Decide")
    def decide(self, obj):
        if obj.current_status != ApprovalStatus.PENDING:
            return EMPTY
        return format_html('<a class="button" href="{}">Approve…</a> <a class="button" href="{}">Reject…</a>',
                           self.own_url("approve", quote(obj.pk)), self.own_url("reject", quote(obj.pk)))

    # Deciding.

    def has_approve_approval_permission(self, request, obj=None):
        return request.user.has_perm("approvals.approve_approval")

    def _decision_view(self, request, approval, *, verb):
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                if verb == "approve":
                    services.approval_approve(approval_id=approval.pk, actor=request.user,
                                              reason=form.cleaned_data["reason"])
                else:
                    services.approval_reject(approval_id=approval.pk, actor=request.user,
                                             reason=form.cleaned_data["reason"])
            except PermissionDenied as error:
                self.message_user(request, f"Request #{approval.pk} not approved. {error}", messages.ERROR)
            except (Conflict, ValidationError) as error:
                self.message_user(request, f"Request #{approval.pk} not decided. {service_error_text(error)}",
                                  messages.ERROR)
            else:
                done = "approved and applied" if verb == "approve" else "rejected"
                self.message_user(request, f"Request #{approval.pk} {done}.", messages.SUCCESS)
            return HttpResponseRedirect(object_url(Approval, approval.pk))
        return self.action_form_response(
            request, title=f"{verb.capitalize()} request #{approval.pk}", form=form, objects=[], original=approval,
            details=[("Action", approval.get_action_display()), ("Proposed by", approval.proposed_by),
                     ("Reason", approval.reason), ("Change", self.summary(approval))],
            submit_label=verb.capitalize(),
            description="Approving applies the change now, checked again against the current state; nobody "
                        "approves their own request." if verb == "approve" else
                        "Rejecting closes the request; nothing of it takes effect.",
        )

    def approve_view(self, request, approval):
        return self._decision_view(request, approval, verb="approve")

    def reject_view(self, request, approval):
        return self._decision_view(request, approval, verb="reject")

    def get_urls(self):
        return [
            path("<path:object_id>/approve/", self.object_view(self.approve_view,
                                                               self.has_approve_approval_permission),
                 name=self.url_name("approve")),
            path("<path:object_id>/reject/", self.object_view(self.reject_view, self.has_approve_approval_permission),
                 name=self.url_name("reject")),
            *super().get_urls(),
        ]
