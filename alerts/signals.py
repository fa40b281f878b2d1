"""Signals the alerts app sends; the webhooks app subscribes."""

from django.dispatch import Signal

# Sent inside the transaction that opened an alert, with ``alert``.
alert_opened = Signal()
