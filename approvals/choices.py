from django.db import models


class ApprovalAction(models.TextChoices):
    """The actions that may need a second person (settings.APPROVAL_ACTIONS names which do)."""

    GAME_UPDATE = "game.update", "Game configuration change"
    # Both under the setting's "game.create": a game that may take bets, new or made active again.
    GAME_CREATE = "game.create", "Creation of an active game"
    GAME_ACTIVATE = "game.activate", "Activation of a game"
    ACCOUNT_ADJUST = "account.adjust", "Balance adjustment"
    ROUND_VOID = "round.void", "Void of a dealt round"


class ApprovalStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    APPLIED = "applied", "Applied"
    REJECTED = "rejected", "Rejected"
    EXPIRED = "expired", "Expired"
