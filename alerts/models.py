"""An alert: one row per episode of a condition that a periodic check found (alerts.checks); an
incident: the time the service was impaired, from its first critical alert until all are resolved."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from alerts.choices import AlertKind, AlertSeverity, AlertStatus, IncidentStatus


class Incident(models.Model):
    """Opened when a critical alert (AlertKind.CRITICAL) opens and no incident is open; every critical
    alert opened while it is open joins it; the service is restored when the last of its alerts is
    resolved, by a person (``restored_by``) or by the system (its check no longer finds it)."""

    opened_at = models.DateTimeField()
    cause = models.TextField(help_text="The first alert's kind and message.")
    status = models.CharField(max_length=16, choices=IncidentStatus.choices, default=IncidentStatus.OPEN)
    restored_at = models.DateTimeField(null=True, blank=True)
    restored_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                                    related_name="+", help_text="Empty when the system saw the conditions clear.")
    restored_by_actor = models.CharField(max_length=150, blank=True, help_text="User name, or system:alerts.")

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=IncidentStatus.values), name="incident_status_valid"),
            models.UniqueConstraint(fields=["status"], condition=Q(status=IncidentStatus.OPEN),
                                    name="incident_one_open"),
            models.CheckConstraint(
                condition=Q(status=IncidentStatus.OPEN, restored_at__isnull=True)
                | Q(status=IncidentStatus.RESTORED, restored_at__gte=models.F("opened_at")),
                name="incident_restored_has_time"),
        ]

    def __str__(self):
        return f"incident #{self.pk}"


class Alert(models.Model):
    kind = models.CharField(max_length=32, choices=AlertKind.choices)
    # What the episode is about, within its kind: "settlement", "main-table:2026-11-30:BANKER", "bet:42".
    key = models.CharField(max_length=200)
    severity = models.CharField(max_length=16, choices=AlertSeverity.choices)
    status = models.CharField(max_length=16, choices=AlertStatus.choices, default=AlertStatus.OPEN)
    message = models.TextField()
    details = models.JSONField(default=dict)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    times_seen = models.PositiveIntegerField(default=1)
    acknowledged_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                                        related_name="+")
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledge_note = models.TextField(blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                                    related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolve_note = models.TextField(blank=True)
    incident = models.ForeignKey(Incident, on_delete=models.PROTECT, null=True, blank=True, related_name="alerts")

    class Meta:
        ordering = ["-last_seen", "-id"]
        permissions = [("handle_alert", "Can acknowledge and resolve alerts")]
        indexes = [models.Index(fields=["status", "-last_seen"])]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=AlertKind.values), name="alert_kind_valid"),
            models.CheckConstraint(condition=Q(severity__in=AlertSeverity.values), name="alert_severity_valid"),
            models.CheckConstraint(condition=Q(status__in=AlertStatus.values), name="alert_status_valid"),
            # One episode at a time: a condition still unresolved is not opened again.
            models.UniqueConstraint(fields=["kind", "key"], condition=~Q(status=AlertStatus.RESOLVED),
                                    name="alert_one_unresolved_per_key"),
            models.CheckConstraint(condition=Q(last_seen__gte=models.F("first_seen")), name="alert_seen_in_order"),
            models.CheckConstraint(
                condition=~Q(status=AlertStatus.RESOLVED) | Q(resolved_at__isnull=False),
                name="alert_resolved_has_time"),
        ]

    def __str__(self):
        return f"#{self.pk} {self.kind} {self.key}"
