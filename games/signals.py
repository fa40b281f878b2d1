"""Signals the games app sends; other apps (settlement) subscribe, games knows none of them."""

from django.dispatch import Signal

# Sent once the transaction that dealt rounds has committed, with ``round_ids``.
round_dealt = Signal()
