"""Signals of the settlement app: the services send them, settlement.receivers enqueue the tasks."""

from django.dispatch import Signal

# Sent once the transaction that asked for a sweep has committed.
sweep_requested = Signal()

# Sent inside the transaction of a settlement batch, with ``round_ids``: a receiver's writes (webhook
# outbox rows) commit or roll back with the settlement.
rounds_settled = Signal()

# Sent inside the transaction in which an operator settled a held bet, with ``bet``: the bet.settled
# webhook event of a held bet is written then (a held bet is left out of its round's).
held_bet_settled = Signal()

# Sent after a settlement batch failed and its failure was recorded (or could not be), with ``round_ids``.
batch_failed = Signal()
