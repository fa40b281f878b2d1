import enum

from django.db import models


class AlertKind(models.TextChoices):
    SETTLEMENT_LAG = "settlement_lag", "Settlement lag"
    ROUNDS_FOR_OPERATORS = "rounds_for_operators", "Rounds left for operators"
    HELD_BETS = "held_bets", "Bets held for operators"
    AUDIT_CHAIN = "audit_chain", "Audit log verification failed"
    AUDIT_PENDING = "audit_pending", "Audit events waiting for the sequencer"
    AUDIT_HEADS = "audit_heads", "Audit heads that do not verify"
    PERIODIC_TASKS = "periodic_tasks", "Periodic tasks of the audit log or alerts not running"
    READINESS = "readiness", "Readiness failing"
    OUTCOME_TEST = "outcome_test", "A day's outcomes off the published odds"
    RTP_BAND = "rtp_band", "Actual RTP outside its plausible band"
    LARGE_PAYOUT = "large_payout", "Large single payout"
    REPLICA = "replica", "Read replica not answering or behind"
    PARTITIONS = "partitions", "Partitions of the months ahead missing"

    # The critical kinds: the service is impaired (settlement stalled, the audit log stalled or
    # broken, players' bets held, the workers not ready). Their alerts are critical, open or join an
    # incident, and are resolved by the system when their check no longer finds them.
    CRITICAL = enum.nonmember(frozenset({
        "settlement_lag", "rounds_for_operators", "held_bets", "audit_chain", "audit_pending", "audit_heads",
        "periodic_tasks", "readiness", "partitions",
    }))


class AlertSeverity(models.TextChoices):
    INFO = "info", "Info"
    WARNING = "warning", "Warning"
    CRITICAL = "critical", "Critical"


class AlertStatus(models.TextChoices):
    OPEN = "open", "Open"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    RESOLVED = "resolved", "Resolved"


class IncidentStatus(models.TextChoices):
    OPEN = "open", "Open"
    RESTORED = "restored", "Service restored"
