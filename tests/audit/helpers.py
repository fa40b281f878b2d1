"""Helpers of the audit tests."""

import time

from audit.models import AuditEvent
from audit.sequencer import sequence_pending

WAIT = 20  # seconds a thread may take before the test calls it stuck


def sequence_all(timeout: float = WAIT) -> None:
    """Sequence until no event is pending. On a shared PostgreSQL server a transaction open in any
    database holds the sequencer's horizon back for a moment (audit.sequencer)."""
    deadline = time.monotonic() + timeout
    while True:
        sequence_pending()
        if not AuditEvent.objects.filter(leaf__isnull=True).exists():
            return
        assert time.monotonic() < deadline, "events still pending"
        time.sleep(0.05)
