"""Helpers of the audit tests."""

import time

from audit.models import AuditEvent
from audit.sequencer import sequence_pending

WAIT = 20  # seconds a thread may take before the test calls it stuck


def sequence_all(timeout: float = WAIT) -> None:
    """Sequence until no event is pending (a transaction of the test's own still open, a thread's,
    keeps its events pending until it ends: audit.sequencer)."""
    deadline = time.monotonic() + timeout
    while True:
        sequence_pending()
        if not AuditEvent.objects.filter(leaf__isnull=True).exists():
            return
        assert time.monotonic() < deadline, "events still pending"
        time.sleep(0.05)
