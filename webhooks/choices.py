from django.db import models


class EventType(models.TextChoices):
    ROUND_SETTLED = "round.settled", "Round settled"
    BET_SETTLED = "bet.settled", "Bet settled"
    ROUND_VOIDED = "round.voided", "Round voided"
    SEEDS_REVEALED = "seeds.revealed", "Seeds revealed"
    ALERT_OPENED = "alert.opened", "Alert opened"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed (attempts exhausted)"
    CANCELLED = "cancelled", "Cancelled (its endpoint or client was disabled)"
