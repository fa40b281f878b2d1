from django.db.models import Case, IntegerField, QuerySet, Value, When

from alerts.choices import AlertSeverity, AlertStatus
from alerts.models import Alert


def alert_list(*, filters: dict) -> QuerySet:
    alerts = Alert.objects.select_related("acknowledged_by", "resolved_by")
    for name in ("status", "kind", "severity"):
        if filters.get(name):
            alerts = alerts.filter(**{name: filters[name]})
    return alerts


def alerts_unresolved() -> list:
    """Open alerts first, then acknowledged ones; critical before the rest; newest first."""
    def first_when(**condition):
        return Case(When(**condition, then=Value(0)), default=Value(1), output_field=IntegerField())

    return list(Alert.objects.exclude(status=AlertStatus.RESOLVED).annotate(
        open_first=first_when(status=AlertStatus.OPEN), critical_first=first_when(severity=AlertSeverity.CRITICAL),
    ).order_by("open_first", "critical_first", "-last_seen")[:50])


def alert_get(*, alert_id: int) -> Alert:
    return Alert.objects.get(pk=alert_id)
