from django.db import models


class AuditAction(models.TextChoices):
    """Every action the audit trail records; reports and filters name them from here."""

    GAME_CREATED = "game.created", "Game created"
    GAME_CONFIGURED = "game.configured", "Game configured"
    GAME_STATUS_CHANGED = "game.status_changed", "Game status changed"
    SEED_PAIR_COMMITTED = "seed_pair.committed", "Seed pair committed"
    SEED_PAIR_REVEALED = "seed_pair.revealed", "Seed pair revealed"
    SEED_PAIR_RETIRED = "seed_pair.retired", "Seed pair retired (reveal pending)"
    ROUND_OPENED = "round.opened", "Round opened"
    ROUND_DEALT = "round.dealt", "Round dealt"
    ROUND_VOIDED = "round.voided", "Round voided"
    BET_ACCEPTED = "bet.accepted", "Bet accepted"
    BET_REFUNDED = "bet.refunded", "Bet refunded"
    ROUNDS_SETTLED = "rounds.settled", "Rounds settled"
    SWEEP_REQUESTED = "settlement.sweep_requested", "Settlement sweep requested"
    ACCOUNT_CREATED = "account.created", "Account created"
    ACCOUNT_ADJUSTED = "account.adjusted", "Account adjusted"
    STAFF_CREATED = "staff.created", "Staff user created"
    STAFF_CHANGED = "staff.changed", "Staff user changed"
    STAFF_ROLES_CHANGED = "staff.roles_changed", "Staff roles changed"
    LOGIN_FAILED = "auth.login_failed", "Log-in failed"
    LOGIN_LOCKED_OUT = "auth.locked_out", "User name locked out after failed log-ins"
