"""Alerts: raising what the checks find (once per episode), acknowledging and resolving with a note.

Opening an alert writes its audit event, sends ``alert_opened`` inside the transaction (the webhooks
app writes its outbox rows there) and emails ALERT_EMAIL_RECIPIENTS once the transaction commits.

Incidents: a critical alert (AlertKind.CRITICAL) opens one when none is open, or joins the open one;
the alert of a critical condition is resolved by the system once its check no longer finds it; the
incident's service is restored when its last alert is resolved, by a person or by the system. Locks:
an alert, then the incident.
"""

import logging

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from alerts import schedules
from alerts.checks import CHECKS, CLEARED_BY, Finding
from alerts.choices import AlertKind, AlertStatus, IncidentStatus
from alerts.models import Alert, Incident
from alerts.signals import alert_opened
from audit.choices import AuditAction
from audit.services import actor_fields, audit_record
from audit.validators import required_reason
from core.errors import Conflict

logger = logging.getLogger(__name__)
SYSTEM_ACTOR = "system:alerts"
CLEARED_NOTE = "Cleared: the check no longer finds this condition."


def _email(alert: Alert) -> None:
    if not settings.ALERT_EMAIL_RECIPIENTS:
        return
    try:
        send_mail(subject=f"[{alert.get_severity_display()}] {alert.get_kind_display()}", message=alert.message,
                  from_email=None, recipient_list=settings.ALERT_EMAIL_RECIPIENTS)
    except OSError:
        # The alert stays open on the dashboard and in the admin; a mail server down must not lose it.
        logger.exception("alert %s: the notification email could not be sent", alert.pk)


def alert_raise(finding: Finding) -> tuple[Alert, bool]:
    """Open an alert for the finding, or note that its open episode was seen again. Returns (alert, opened)."""
    now = timezone.now()
    try:
        with transaction.atomic():
            unresolved = (Alert.objects.select_for_update()
                          .filter(kind=finding.kind, key=finding.key).exclude(status=AlertStatus.RESOLVED).first())
            if unresolved is not None:
                unresolved.last_seen = now
                unresolved.times_seen += 1
                unresolved.message, unresolved.details = finding.message, finding.details
                unresolved.save(update_fields=["last_seen", "times_seen", "message", "details"])
                return unresolved, False
            if not finding.recurring:
                earlier = Alert.objects.filter(kind=finding.kind, key=finding.key).first()
                if earlier is not None:
                    return earlier, False  # a fixed past fact, resolved already: not raised again
            alert = Alert.objects.create(kind=finding.kind, key=finding.key, severity=finding.severity,
                                         message=finding.message, details=finding.details, first_seen=now,
                                         last_seen=now)
            joined = {"incident": _incident_join(alert, now).pk} if alert.kind in AlertKind.CRITICAL else {}
            audit_record(actor=SYSTEM_ACTOR, action=AuditAction.ALERT_OPENED, obj=alert,
                         after={"kind": alert.kind, "key": alert.key, "severity": alert.severity,
                                "message": alert.message, **joined})
            alert_opened.send(sender=Alert, alert=alert)
            transaction.on_commit(lambda: _email(alert))
            return alert, True
    except IntegrityError:
        # Another run opened the same episode at the same moment; the database kept one.
        return Alert.objects.exclude(status=AlertStatus.RESOLVED).get(kind=finding.kind, key=finding.key), False


def _incident_join(alert: Alert, now) -> Incident:
    """The open incident the new critical alert joins; opened for it when none is."""
    incident = Incident.objects.select_for_update().filter(status=IncidentStatus.OPEN).first()
    if incident is None:
        try:
            with transaction.atomic():
                incident = Incident.objects.create(opened_at=now, cause=f"{alert.get_kind_display()}: {alert.message}")
        except IntegrityError:  # another alert opened one at the same moment (one open at a time): join it
            incident = Incident.objects.select_for_update().get(status=IncidentStatus.OPEN)
        else:
            audit_record(actor=SYSTEM_ACTOR, action=AuditAction.INCIDENT_OPENED, obj=incident,
                         after={"cause": incident.cause, "alert": alert.pk})
    alert.incident = incident
    alert.save(update_fields=["incident"])
    return incident


def _incident_restore_if_done(alert: Alert, actor) -> None:
    """Once the last unresolved alert of its incident is resolved (by ``actor``), the service is restored."""
    if alert.incident_id is None:
        return
    incident = Incident.objects.select_for_update().get(pk=alert.incident_id)
    if incident.status != IncidentStatus.OPEN or incident.alerts.exclude(status=AlertStatus.RESOLVED).exists():
        return
    who = actor_fields(actor)
    incident.status, incident.restored_at = IncidentStatus.RESTORED, max(alert.resolved_at, incident.opened_at)
    incident.restored_by_id, incident.restored_by_actor = who["actor_user_id"], who["actor"]
    incident.save(update_fields=["status", "restored_at", "restored_by", "restored_by_actor"])
    audit_record(actor=actor, action=AuditAction.INCIDENT_RESTORED, obj=incident,
                 before={"status": IncidentStatus.OPEN},
                 after={"status": incident.status, "restored_by": incident.restored_by_actor,
                        "alerts": sorted(incident.alerts.values_list("pk", flat=True))})


def _alerts_clear(kind: str, found_keys: set) -> int:
    """The system resolves the unresolved alerts of a critical ``kind`` whose key its check no longer finds."""
    cleared = 0
    for alert_id in (Alert.objects.filter(kind=kind).exclude(status=AlertStatus.RESOLVED)
                     .exclude(key__in=found_keys).values_list("pk", flat=True)):
        with transaction.atomic():
            alert = _locked(alert_id)
            if alert.status == AlertStatus.RESOLVED:
                continue
            _resolve(alert, actor=SYSTEM_ACTOR, note=CLEARED_NOTE)
            cleared += 1
    return cleared


def alerts_check(names=None) -> dict:
    """Run the named checks (all by default); returns {check: (findings, alerts opened)}. The alerts of
    a critical condition a check ran for and no longer finds are resolved by the system."""
    summary = {}
    for name in names or list(CHECKS):
        findings = CHECKS[name]()
        opened = sum(alert_raise(finding)[1] for finding in findings)
        if name in CLEARED_BY:
            _alerts_clear(CLEARED_BY[name], {finding.key for finding in findings})
        summary[name] = (len(findings), opened)
    return summary


@transaction.atomic
def periodic_task_save(*, task: PeriodicTask, actor, reason: str) -> PeriodicTask:
    """Save a periodic task as an operator changed it (or created it), with its audit event and the
    reason; a change that would switch off a task the audit log or the alerts depend on is refused
    (ValidationError naming the field ``enabled``), and so is a change with no reason."""
    reason = required_reason(reason)
    before = PeriodicTask.objects.select_for_update().filter(pk=task.pk).first() if task.pk else None
    refused = schedules.refusal(before, task)
    if refused:
        raise ValidationError({"enabled": [refused]})
    task.save()
    after = schedules.state(task)
    previous = schedules.state(before) if before is not None else None
    if previous != after:
        audit_record(actor=actor, action=AuditAction.PERIODIC_TASK_CHANGED, object_type="periodictask",
                     object_id=str(task.pk), before=previous, after=after, reason=reason)
    return task


def _locked(alert_id: int) -> Alert:
    return Alert.objects.select_for_update().get(pk=alert_id)


@transaction.atomic
def alert_acknowledge(*, alert_id: int, actor, note: str) -> Alert:
    note = required_reason(note)
    alert = _locked(alert_id)
    if alert.status != AlertStatus.OPEN:
        raise Conflict("alert", f"The alert is {alert.status}; only an open alert can be acknowledged.")
    alert.status, alert.acknowledged_by, alert.acknowledged_at = AlertStatus.ACKNOWLEDGED, actor, timezone.now()
    alert.acknowledge_note = note
    alert.save(update_fields=["status", "acknowledged_by", "acknowledged_at", "acknowledge_note"])
    audit_record(actor=actor, action=AuditAction.ALERT_ACKNOWLEDGED, obj=alert, before={"status": AlertStatus.OPEN},
                 after={"status": alert.status}, reason=note)
    return alert


@transaction.atomic
def alert_resolve(*, alert_id: int, actor, note: str) -> Alert:
    note = required_reason(note)
    alert = _locked(alert_id)
    if alert.status == AlertStatus.RESOLVED:
        raise Conflict("alert", "The alert is resolved already.")
    return _resolve(alert, actor=actor, note=note)


def _resolve(alert: Alert, *, actor, note: str) -> Alert:
    """Resolve the locked alert, by a person or the system (SYSTEM_ACTOR); its incident's service is
    restored if it was the incident's last."""
    before = alert.status
    alert.status, alert.resolved_by_id, alert.resolved_at, alert.resolve_note = (
        AlertStatus.RESOLVED, actor_fields(actor)["actor_user_id"], timezone.now(), note)
    alert.save(update_fields=["status", "resolved_by", "resolved_at", "resolve_note"])
    audit_record(actor=actor, action=AuditAction.ALERT_RESOLVED, obj=alert, before={"status": before},
                 after={"status": alert.status}, reason=note)
    _incident_restore_if_done(alert, actor)
    return alert
