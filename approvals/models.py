"""A request that waits for a second person (four eyes) before it takes effect."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from approvals.choices import ApprovalAction, ApprovalStatus
from core.money import money_text


class Approval(models.Model):
    action = models.CharField(max_length=32, choices=ApprovalAction.choices)
    status = models.CharField(max_length=16, choices=ApprovalStatus.choices, default=ApprovalStatus.PENDING)
    # What the action acts on, named as the audit trail names objects (model name, primary key).
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64)
    # What it acts on as people name it when proposed (a game's slug), for the title; "" where the
    # changes name it (an account, a round).
    object_name = models.CharField(max_length=64, blank=True, default="")
    # The arguments of the service that approving calls (JSON-ready), and the change as people read it.
    payload = models.JSONField()
    changes = models.JSONField()
    reason = models.TextField()
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    proposed_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
                                   null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-proposed_at", "-id"]
        permissions = [("approve_approval", "Can approve or reject another person's request")]
        indexes = [models.Index(fields=["status", "expires_at"]), models.Index(fields=["object_type", "object_id"])]
        constraints = [
            models.CheckConstraint(condition=Q(action__in=ApprovalAction.values), name="approval_action_valid"),
            models.CheckConstraint(condition=Q(status__in=ApprovalStatus.values), name="approval_status_valid"),
            models.CheckConstraint(
                condition=Q(status=ApprovalStatus.PENDING, decided_at__isnull=True, decided_by__isnull=True)
                | (~Q(status=ApprovalStatus.PENDING) & Q(decided_at__isnull=False)),
                name="approval_decided_unless_pending",
            ),
            # Four eyes: nobody applies their own request.
            models.CheckConstraint(condition=~Q(status=ApprovalStatus.APPLIED, decided_by=F("proposed_by")),
                                   name="approval_not_by_proposer"),
            models.CheckConstraint(condition=Q(expires_at__gt=F("proposed_at")), name="approval_expires_later"),
        ]

    def __str__(self):
        return f"Request #{self.pk}: {self.title}"

    @property
    def title(self) -> str:
        """The request as people say it, from its ``changes``: "Adjust account player-7 by −120.00 EUR"."""
        changes = self.changes or {}
        if self.action == ApprovalAction.ACCOUNT_ADJUST:
            amount = changes.get("amount")
            shown = money_text(amount, changes.get("currency", "")) if amount is not None else "an amount"
            return f"Adjust account {changes.get('account')} by {shown}"
        if self.action == ApprovalAction.ROUND_VOID:
            return f"Void round #{changes.get('round', self.object_id)} of game {changes.get('game')}"
        if self.action == ApprovalAction.GAME_CREATE:
            return f"Create the active game {changes.get('slug')}"
        verb = "Activate" if self.action == ApprovalAction.GAME_ACTIVATE else "Change"
        fields = ", ".join(name.replace("_", " ") for name in changes)
        game = self.object_name or f"#{self.object_id}"  # a row stored before names were kept
        return f"{verb} game {game}" + (f": {fields}" if fields else "")

    @property
    def current_status(self) -> str:
        """The status as of now: a pending request past its expiry reads as expired before the sweep runs."""
        if self.status == ApprovalStatus.PENDING and self.expires_at <= timezone.now():
            return ApprovalStatus.EXPIRED
        return self.status
