from django.db import DEFAULT_DB_ALIAS
from django.db.models import Case, IntegerField, QuerySet, Value, When

from alerts.choices import AlertSeverity, AlertStatus
from alerts.models import Alert


def alert_list(*, filters: dict, using: str = DEFAULT_DB_ALIAS) -> QuerySet:
    alerts = Alert.objects.using(using).select_related("acknowledged_by", "resolved_by")
    for name in ("status", "kind", "severity"):
        if filters.get(name):
            alerts = alerts.filter(**{name: filters[name]})
    return alerts


def alerts_unresolved(*, using: str = DEFAULT_DB_ALIAS) -> list:
    """Open alerts first, then acknowledged ones; critical before the rest; newest first."""
    def first_when(**condition):
        return Case(When(**condition, then=Value(0)), default=Value(1), output_field=IntegerField())

    return list(Alert.objects.using(using).exclude(status=AlertStatus.RESOLVED).annotate(
        open_first=first_when(status=AlertStatus.OPEN), critical_first=first_when(severity=AlertSeverity.CRITICAL),
    ).order_by("open_first", "critical_first", "-last_seen")[:50])


def alert_get(*, alert_id: int, using: str = DEFAULT_DB_ALIAS) -> Alert:
    return Alert.objects.using(using).get(pk=alert_id)
