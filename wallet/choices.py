from django.db import models


class LedgerKind(models.TextChoices):
    STAKE = "STAKE", "Stake (debit)"
    PAYOUT = "PAYOUT", "Payout (credit)"
    REFUND = "REFUND", "Refund (credit)"
    ADJUSTMENT = "ADJUSTMENT", "Adjustment"
