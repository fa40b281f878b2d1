"""Signals of the settlement app: the services send them, settlement.receivers enqueue the tasks."""

from django.dispatch import Signal

# Sent once the transaction that asked for a sweep has committed.
sweep_requested = Signal()
