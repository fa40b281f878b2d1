"""Incidents as CSV: one row each, with the alerts in it (id:kind, in the order they opened)."""

from backoffice.admin.exports import Export, text, when


def _incident_row(incident) -> list:
    alerts = sorted(incident.alerts.all(), key=lambda alert: (alert.first_seen, alert.pk))
    duration = (incident.restored_at - incident.opened_at).total_seconds() if incident.restored_at else None
    return [
        incident.pk, when(incident.opened_at), text(incident.cause), incident.status, when(incident.restored_at),
        text(incident.restored_by_actor), "" if duration is None else f"{duration:.0f}",
        " ".join(f"{alert.pk}:{alert.kind}" for alert in alerts),
    ]


INCIDENTS_EXPORT = Export(
    name="incidents",
    header=("incident_id", "opened_at", "cause", "status", "restored_at", "restored_by", "duration_seconds",
            "alerts"),
    row=_incident_row,
)
