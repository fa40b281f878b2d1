from django.db import DEFAULT_DB_ALIAS
from django.db.models import Case, Count, IntegerField, Prefetch, QuerySet, Value, When

from alerts.choices import AlertKind, AlertSeverity, AlertStatus
from alerts.models import Alert, Incident


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


def incident_list(*, filters: dict, using: str = DEFAULT_DB_ALIAS) -> QuerySet:
    """Incidents, newest first, each with its alerts (one more query for all of them)."""
    incidents = Incident.objects.using(using).prefetch_related(
        Prefetch("alerts", queryset=Alert.objects.using(using).order_by("first_seen", "pk")))
    if filters.get("status"):
        incidents = incidents.filter(status=filters["status"])
    return incidents


def incident_get(*, incident_id: int, using: str = DEFAULT_DB_ALIAS) -> Incident:
    return incident_list(filters={}, using=using).get(pk=incident_id)


def alerts_open_by_kind(*, using: str = DEFAULT_DB_ALIAS) -> dict:
    """{kind: open alerts} for every kind (0 for none), for the metrics; acknowledged ones are not open."""
    counts = dict(Alert.objects.using(using).filter(status=AlertStatus.OPEN).order_by()
                  .values_list("kind").annotate(Count("id")))
    return {kind: counts.get(kind, 0) for kind in AlertKind.values}
