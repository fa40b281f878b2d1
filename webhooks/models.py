"""Webhook endpoints of integration clients, their signing secrets, and the outbox of deliveries.

An event is written with one delivery per subscribed endpoint inside the transaction of the change
it reports (webhooks.receivers): a change that rolls back leaves no event to deliver.
"""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from webhooks.choices import DeliveryStatus, EventType
from webhooks.validators import URL_MAX_LENGTH, validate_endpoint_url, validate_event_types


class Endpoint(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="webhook_endpoints",
                              help_text="The integration client the deliveries are for.")
    # Not a URLField: Django's URL rule differs from ours (webhooks.validators), which alone decides.
    url = models.CharField(max_length=URL_MAX_LENGTH, validators=[validate_endpoint_url],
                           help_text="https://… (http only where allowed); no credentials, no #fragment.")
    events = models.JSONField(validators=[validate_event_types],
                              help_text=f"Any of: {', '.join(EventType.values)}.")
    description = models.CharField(max_length=200, blank=True)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # What the database can check of the URL rule whatever the settings: the scheme, no fragment.
            models.CheckConstraint(
                condition=(Q(url__startswith="https://") | Q(url__startswith="http://")) & ~Q(url__contains="#"),
                name="webhook_endpoint_url_shape"),
        ]

    def __str__(self):
        return f"{self.url} ({self.owner})"


class EndpointSecret(models.Model):
    """A signing secret. Rotation adds a new one and lets the previous one expire later: while both
    are valid, every delivery carries a signature by each, so receivers switch without downtime."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="secrets")
    secret = models.CharField(max_length=100, editable=False)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: valid until the next rotation.")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"secret of endpoint {self.endpoint_id} from {self.created_at:%Y-%m-%d %H:%M}"


class Event(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False,
                          help_text="Sent with every delivery: receivers de-duplicate by it.")
    type = models.CharField(max_length=32, choices=EventType.choices)
    data = models.JSONField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.CheckConstraint(condition=Q(type__in=EventType.values), name="webhook_event_type_valid")]

    def __str__(self):
        return f"{self.type} {self.pk}"


class Delivery(models.Model):
    """The outbox row: one event to one endpoint, retried with exponential backoff until delivered."""

    event = models.ForeignKey(Event, on_delete=models.PROTECT, related_name="deliveries")
    endpoint = models.ForeignKey(Endpoint, on_delete=models.PROTECT, related_name="deliveries")
    status = models.CharField(max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(help_text="When a worker may try (again); pushed ahead while one tries.")
    delivered_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "deliveries"
        indexes = [models.Index(fields=["status", "next_attempt_at"])]
        constraints = [
            models.UniqueConstraint(fields=["event", "endpoint"], name="webhook_one_delivery_per_endpoint"),
            models.CheckConstraint(condition=Q(status__in=DeliveryStatus.values), name="webhook_delivery_status_valid"),
            models.CheckConstraint(condition=~Q(status=DeliveryStatus.DELIVERED) | Q(delivered_at__isnull=False),
                                   name="webhook_delivered_has_time"),
        ]

    def __str__(self):
        return f"{self.event.type} → {self.endpoint.url}"


class DeliveryAttempt(models.Model):
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    response_excerpt = models.TextField(blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_number_unique")]

    def __str__(self):
        return f"attempt {self.number} of delivery {self.delivery_id}"
