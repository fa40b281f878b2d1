from django.db import models

from games.engine import REGISTRY
from games.engine import Outcome as EngineOutcome
from games.engine.payout import LOSE, PUSH, WIN


class GameStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    SUSPENDED = "suspended", "Suspended"
    RETIRED = "retired", "Retired"


class RoundStatus(models.TextChoices):
    OPEN = "OPEN", "Open (taking bets)"
    DEALT = "DEALT", "Dealt (awaiting settlement)"
    SETTLED = "SETTLED", "Settled"
    VOID = "VOID", "Void"


class Outcome(models.TextChoices):
    PLAYER = EngineOutcome.PLAYER, "Player"
    BANKER = EngineOutcome.BANKER, "Banker"
    TIE = EngineOutcome.TIE, "Tie"


# Every registered bet type (games/engine/bets.py), the three main bets first: BetType.PLAYER and so on.
BetType = models.TextChoices("BetType", [(name, (name, kind.label)) for name, kind in REGISTRY.items()])


class BetStatus(models.TextChoices):
    PENDING = "PENDING", "Pending"
    WON = "WON", "Won"
    LOST = "LOST", "Lost"
    PUSH = "PUSH", "Push (stake returned)"
    REFUNDED = "REFUNDED", "Refunded (round voided)"
    # Its round settled but this bet's writes failed: left unpaid, with a reason, for an operator.
    HELD = "HELD", "Held (for operators)"


# A settled bet's status, by the engine's settlement kind.
STATUS_BY_SETTLEMENT_KIND = {WIN: BetStatus.WON, LOSE: BetStatus.LOST, PUSH: BetStatus.PUSH}
