"""The four-eyes queue in the admin: each request with its diff beside the current values (and, for a
game, the exact return to player before and after), approved or rejected with a reason by a second
person; the Approve… and Reject… buttons show only to those who may use them."""

from django.contrib import admin, messages
from django.contrib.admin.utils import quote
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.urls import path
from django.utils.html import format_html, format_html_join

from approvals import selectors, services
from approvals.actions import KINDS
from approvals.choices import ApprovalAction, ApprovalStatus
from approvals.models import Approval
from audit.forms import ReasonForm
from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.html import object_url, service_error_text
from backoffice.formatting import EMPTY
from backoffice.step_up import step_up_required
from core.errors import Conflict
from games.engine import BET_TYPES
from games.forms import rtp_preview
from games.models import GameInstance, Round
from games.paytable_text import side_bets_text
from wallet.models import Account

OBJECT_MODELS = {"gameinstance": GameInstance, "round": Round, "account": Account}
GAME_ACTIONS = (ApprovalAction.GAME_UPDATE, ApprovalAction.GAME_ACTIVATE, ApprovalAction.GAME_CREATE)
APPROVE_PERMISSION = "approvals.approve_approval"


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
    if isinstance(value, dict):  # a game's side bets: {side bet: {event: multiplier}}
        return side_bets_text(value)
    return EMPTY if value in (None, "") else str(value)


def _is_change(value) -> bool:
    """A value of ``changes`` that is a before → after (a new game's are values, its side bets a mapping)."""
    return isinstance(value, dict) and set(value) == {"before", "after"}


def _current_values(approval) -> dict:
    """The values now of what the request changes, as its ``changes`` word them ({} for a new game)."""
    if not approval.object_id:
        return {}
    model = OBJECT_MODELS.get(approval.object_type)
    obj = model.objects.filter(pk=approval.object_id).first() if model else None
    if obj is None:
        return {}
    if isinstance(obj, GameInstance):
        return obj.configuration()
    if isinstance(obj, Round):
        return {"status": obj.status}
    return {"balance": obj.balance}


def _rtp_cell(bet: dict | None) -> str:
    if bet is None:
        return "not offered"
    return format_html("{} % <small>({})</small>", bet["rtp"], bet["rtp_exact"])


@admin.register(Approval)
class ApprovalAdmin(ReadOnlyAdmin):
    list_display = ("id", "title_shown", "object_link", "status_shown", "summary", "proposed_by", "proposed_at",
                    "expires_at", "decided_by")
    list_filter = (StatusFilter, "action")
    list_select_related = ("proposed_by", "decided_by")
    fields = ("id", "action", "object_link", "status_shown", "diff", "rtp_before_after", "reason", "proposed_by",
              "proposed_at", "expires_at", "decided_by", "decided_at", "decision_reason")
    readonly_fields = fields

    # Displays.

    @admin.display(description="Request", ordering="action")
    def title_shown(self, obj):
        return obj.title

    @admin.display(description="Status")
    def status_shown(self, obj):
        return ApprovalStatus(obj.current_status).label

    @admin.display(description="Object")
    def object_link(self, obj):
        if not obj.object_id:  # a game not created yet
            return f"new game {obj.payload.get('slug')}"
        model = OBJECT_MODELS[obj.object_type]
        return format_html('<a href="{}">{} {}</a>', object_url(model, obj.object_id), model._meta.verbose_name,
                           obj.object_name or obj.object_id)

    @admin.display(description="Change")
    def summary(self, obj):
        parts = []
        for name, value in obj.changes.items():
            label = name.replace("_", " ")  # as the request's page words it
            if _is_change(value):
                parts.append(f"{label}: {_value(value.get('before'))} → {_value(value.get('after'))}")
            else:
                parts.append(f"{label}: {_value(value)}")
        return "; ".join(parts)

    @admin.display(description="Change")  # as the list and the approve form word it
    def diff(self, obj):
        """Each field: the value the request was proposed against, the proposal, and the value now (a
        field of a game that changed since is flagged: approving is refused; an adjustment is a credit
        or debit of the balance of the moment)."""
        now = _current_values(obj)
        checked = KINDS[obj.action].moved is not None
        rows = []
        for name, value in obj.changes.items():
            before, after = (value.get("before"), value.get("after")) if _is_change(value) else ("", value)
            current = now.get(name, "")
            moved = (checked and _is_change(value) and name in now
                     and (current != before if isinstance(before, dict) else str(current) != str(before)))
            rows.append(("pf-moved" if moved else "", name.replace("_", " "), _value(before), _value(after),
                         _value(current) if name in now else "", " (changed since proposed)" if moved else ""))
        return format_html(
            '<table class="pf-table pf-diff"><thead><tr><th>Field</th><th>Proposed against</th><th>Proposed</th>'
            "<th>Now</th></tr></thead><tbody>{}</tbody></table>",
            format_html_join("", '<tr class="{}"><th scope="row">{}</th><td>{}</td><td>{}</td>'
                                 "<td>{}<strong>{}</strong></td></tr>", rows),
        )

    @admin.display(description="Return to player (exact), before → after")
    def rtp_before_after(self, obj):
        if obj.action not in GAME_ACTIONS:
            return EMPTY
        game = GameInstance.objects.filter(pk=obj.object_id).first() if obj.object_id else GameInstance()
        if game is None:
            return EMPTY
        fields = ("decks", "player_multiplier", "banker_multiplier", "tie_multiplier", "side_bets")
        # A new game's changes are its values (no before: its figures show on both sides).
        changes = {name: value if _is_change(value) else {"before": value, "after": value}
                   for name, value in obj.changes.items()}
        before = {name: changes.get(name, {}).get("before", getattr(game, name)) for name in fields}
        after = {name: changes.get(name, {}).get("after", before[name]) for name in fields}
        previews = [rtp_preview(decks=values["decks"], player=values["player_multiplier"],
                                banker=values["banker_multiplier"], tie=values["tie_multiplier"],
                                side_bets=values["side_bets"])
                    for values in (before, after)]
        if not all(preview["ok"] for preview in previews):
            return EMPTY
        # A side bet offered on one side only is "not offered" on the other.
        before_bets, after_bets = ({bet["bet_type"]: bet for bet in preview["bets"]} for preview in previews)
        bet_types = sorted({*before_bets, *after_bets}, key=BET_TYPES.index)
        rows = [((before_bets.get(bet_type) or after_bets[bet_type])["label"], _rtp_cell(before_bets.get(bet_type)),
                 _rtp_cell(after_bets.get(bet_type))) for bet_type in bet_types]
        return format_html(
            '<table class="pf-table pf-rtp-diff"><thead><tr><th>Bet</th><th>Before</th><th>After</th></tr></thead>'
            "<tbody>{}</tbody></table>",
            format_html_join("", '<tr><th scope="row">{}</th><td>{}</td><td>{}</td></tr>', rows),
        )

    # Deciding: the buttons show only to those who may use them.

    def has_approve_approval_permission(self, request, obj=None):
        return request.user.has_perm(APPROVE_PERMISSION)

    def may_approve(self, request, obj) -> bool:
        """Approve… is offered to a second person holding "approve" and the action's own permission."""
        return (obj.current_status == ApprovalStatus.PENDING and self.has_approve_approval_permission(request, obj)
                and request.user.has_perm(KINDS[obj.action].permission) and obj.proposed_by_id != request.user.pk)

    def may_reject(self, request, obj) -> bool:
        return obj.current_status == ApprovalStatus.PENDING and self.has_approve_approval_permission(request, obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        approval = self.get_object(request, object_id)
        if approval is not None and self.may_approve(request, approval):
            extra_context["approve_url"] = self.own_url("approve", quote(approval.pk))
        if approval is not None and self.may_reject(request, approval):
            extra_context["reject_url"] = self.own_url("reject", quote(approval.pk))
        if approval is not None:
            extra_context["subtitle"] = f"#{approval.pk} {approval.title}"
            extra_context["own_request"] = approval.proposed_by_id == request.user.pk
        return super().change_view(request, object_id, form_url, extra_context)

    @step_up_required
    def _decision_view(self, request, approval, *, verb):
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                if verb == "approve":
                    applied, _result = services.approval_approve(approval_id=approval.pk, actor=request.user,
                                                                 reason=form.cleaned_data["reason"])
                    self.log_applied(request, applied, form.cleaned_data["reason"])
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
            request, title=f"{verb.capitalize()} request #{approval.pk}: {approval.title}", form=form,
            objects=[], original=approval,
            details=[("Action", approval.get_action_display()), ("Proposed by", approval.proposed_by),
                     ("Reason", approval.reason), ("Change", self.diff(approval))],
            submit_label=verb.capitalize(),
            description="Approving applies the change now, checked again against the current state; nobody "
                        "approves their own request." if verb == "approve" else
                        "Rejecting closes the request; nothing of it takes effect.",
        )

    def log_applied(self, request, approval, reason):
        """The applied change in the changed object's own History (Change log), as a change made there
        would be: by the approver, naming the request and its proposer."""
        target = OBJECT_MODELS[approval.object_type].objects.filter(pk=approval.object_id).first()
        if target is not None:
            self.log_change(request, target, f"{approval.title}: request #{approval.pk} by "
                                             f"{approval.proposed_by}, approved: {reason}")

    def approve_view(self, request, approval):
        return self._decision_view(request, approval, verb="approve")

    def reject_view(self, request, approval):
        return self._decision_view(request, approval, verb="reject")

    def get_urls(self):
        return [
            path("<path:object_id>/approve/", self.object_view(self.approve_view,
                                                               self.has_approve_approval_permission,
                                                               APPROVE_PERMISSION),
                 name=self.url_name("approve")),
            path("<path:object_id>/reject/", self.object_view(self.reject_view, self.has_approve_approval_permission,
                                                              APPROVE_PERMISSION),
                 name=self.url_name("reject")),
            *super().get_urls(),
        ]
