"""Signals the games app sends; other apps (settlement) subscribe, games knows none of them."""

from django.dispatch import Signal

# Sent once the transaction that dealt rounds has committed, with ``round_ids``.
round_dealt = Signal()

# Sent inside the transaction that voided a round, with ``round_``: a receiver's writes (a webhook
# outbox row) commit or roll back with the void.
round_voided = Signal()

# Sent inside the transaction that revealed a seed pair, with ``pair``.
seeds_revealed = Signal()
