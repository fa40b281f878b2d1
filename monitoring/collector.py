"""The figures read from the database when /metrics is scraped: backlogs and pending work; and the
readiness checks.

Read once a scrape by the process that answers it, not kept by every worker: a dozen index scans
in one read-only transaction (one snapshot), each statement cut off after METRICS_QUERY_TIMEOUT_MS.
If the database does not answer, the scrape still answers with the processes' own metrics and
``baccarat_metrics_database_up 0``.
"""

import logging
import time

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, connections, transaction
from prometheus_client.core import GaugeMetricFamily

from alerts.selectors import alerts_open_by_kind
from approvals.selectors import approvals_pending_count
from audit.selectors import audit_latest_head, audit_pending_summary
from monitoring.readiness import readiness
from settlement.selectors import settlement_backlog
from webhooks.selectors import delivery_backlog

logger = logging.getLogger(__name__)


def _age(moment, now: float) -> float:
    return max(0.0, now - moment.timestamp()) if moment is not None else 0.0


def read_figures(using: str) -> dict:
    """Everything the gauges show, from one snapshot of the database ``using``."""
    with transaction.atomic(using=using):
        with connections[using].cursor() as cursor:
            cursor.execute("SET TRANSACTION READ ONLY")
            cursor.execute("SELECT set_config('statement_timeout', %s, true)", [str(settings.METRICS_QUERY_TIMEOUT_MS)])
        figures = {"settlement": settlement_backlog(using=using), "audit": audit_pending_summary(using=using),
                   "webhooks": delivery_backlog(using=using), "approvals": approvals_pending_count(using=using),
                   "alerts": alerts_open_by_kind(using=using)}
        try:
            figures["head"] = audit_latest_head(using=using)
        except ImproperlyConfigured:  # no key to check heads with: no head counts
            figures["head"] = None
    return figures


def gauge(name: str, documentation: str, value=None, labels=(), samples=()) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=list(labels) or None)
    if value is not None:
        family.add_metric([], value)
    for label_values, sample in samples:
        family.add_metric(label_values, sample)
    return family


class DatabaseCollector:
    """A prometheus_client collector of the database's figures (registered per scrape)."""

    def __init__(self, using: str):
        self.using = using

    def describe(self):
        return []  # nothing read when registered

    def collect(self):
        try:
            figures = read_figures(self.using)
        except DatabaseError as error:
            logger.warning("metrics: the database figures could not be read: %s", error)
            yield gauge("baccarat_metrics_database_up", "Whether this scrape could read the database's figures", 0)
            return
        now = time.time()
        settlement, audit, head = figures["settlement"], figures["audit"], figures["head"]
        yield gauge("baccarat_metrics_database_up", "Whether this scrape could read the database's figures", 1)
        yield gauge("baccarat_settlement_rounds_waiting", "Dealt rounds waiting for settlement", settlement["waiting"])
        yield gauge("baccarat_settlement_oldest_wait_seconds", "Seconds the oldest dealt round has waited for "
                    "settlement (0 when none waits)", _age(settlement["oldest_dealt_at"], now))
        yield gauge("baccarat_settlement_rounds_for_operators", "Dealt rounds that failed settlement too often "
                    "and are left to operators", settlement["for_operators"])
        yield gauge("baccarat_bets_held", "Bets held for an operator (their settlement failed)",
                    settlement["held_bets"])
        yield gauge("baccarat_audit_events_pending", "Audit events the sequencer has not placed in the log yet",
                    audit["count"])
        yield gauge("baccarat_audit_oldest_pending_seconds", "Seconds the oldest pending audit event has waited "
                    "(0 when none waits)", _age(audit["oldest_created_at"], now))
        # +Inf while there is none (or none that verifies): as stale as a head can be.
        yield gauge("baccarat_audit_head_age_seconds", "Seconds since the latest signed audit head that verifies",
                    max(0.0, now - head.timestamp / 1000) if head is not None else float("inf"))
        yield gauge("baccarat_webhook_deliveries", "Webhook deliveries still to send (pending) and given up (failed)",
                    labels=["status"], samples=[([status], count) for status, count in figures["webhooks"].items()])
        yield gauge("baccarat_approvals_pending", "Requests waiting for a second person", figures["approvals"])
        yield gauge("baccarat_alerts_open", "Open alerts (not acknowledged, not resolved), by kind",
                    labels=["kind"], samples=[([kind], count) for kind, count in figures["alerts"].items()])


class ReadinessCollector:
    """The readiness checks (monitoring.readiness, reused within READINESS_CACHE_SECONDS) as gauges, so
    that Prometheus alerts on them without probing /-/ready itself."""

    def describe(self):
        return []

    def collect(self):
        _ready, body = readiness()
        yield gauge("baccarat_readiness_check_ok", "Whether each readiness check of /-/ready passes (1) or not (0)",
                    labels=["check"], samples=[([name], int(result["ok"])) for name, result in body["checks"].items()])
