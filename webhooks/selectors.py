"""Reads of the webhook outbox."""

from django.db import DEFAULT_DB_ALIAS
from django.db.models import Count

from webhooks.choices import DeliveryStatus
from webhooks.models import Delivery


def delivery_backlog(*, using: str = DEFAULT_DB_ALIAS) -> dict:
    """Deliveries still to be sent (``pending``) and given up after every attempt (``failed``), for the metrics."""
    wanted = (DeliveryStatus.PENDING, DeliveryStatus.FAILED)
    counts = dict(Delivery.objects.using(using).filter(status__in=wanted).order_by()
                  .values_list("status").annotate(Count("id")))
    return {str(status): counts.get(status, 0) for status in wanted}
