from django.db import models


class AuditAction(models.TextChoices):
    """Every action the audit trail records; reports and filters name them from here."""

    GAME_CREATED = "game.created", "Game created"
    GAME_CONFIGURED = "game.configured", "Game configured"
    GAME_STATUS_CHANGED = "game.status_changed", "Game status changed"
    RTP_POLICY_CREATED = "rtp_policy.created", "RTP policy created"
    RTP_POLICY_CHANGED = "rtp_policy.changed", "RTP policy changed"
    SEED_PAIR_COMMITTED = "seed_pair.committed", "Seed pair committed"
    SEED_PAIR_REVEALED = "seed_pair.revealed", "Seed pair revealed"
    SEED_PAIR_RETIRED = "seed_pair.retired", "Seed pair retired (reveal pending)"
    ROUND_OPENED = "round.opened", "Round opened"
    ROUND_DEALT = "round.dealt", "Round dealt"
    ROUND_VOIDED = "round.voided", "Round voided"
    BET_ACCEPTED = "bet.accepted", "Bet accepted"
    BET_REFUNDED = "bet.refunded", "Bet refunded"
    ROUNDS_SETTLED = "rounds.settled", "Rounds settled"
    BETS_HELD = "settlement.bets_held", "Bets held (their settlement failed)"
    HELD_BET_SETTLED = "settlement.held_bet_settled", "Held bet settled by an operator"
    SWEEP_REQUESTED = "settlement.sweep_requested", "Settlement sweep requested"
    ACCOUNT_CREATED = "account.created", "Account created"
    ACCOUNT_ADJUSTED = "account.adjusted", "Account adjusted"
    STAFF_CREATED = "staff.created", "Staff user created"
    STAFF_CHANGED = "staff.changed", "Staff user changed"
    STAFF_ROLES_CHANGED = "staff.roles_changed", "Staff roles changed"
    LOGIN_FAILED = "auth.login_failed", "Log-in failed"
    APPROVAL_REQUESTED = "approval.requested", "Approval requested"
    APPROVAL_APPLIED = "approval.applied", "Approval applied"
    APPROVAL_REJECTED = "approval.rejected", "Approval rejected"
    APPROVAL_EXPIRED = "approval.expired", "Approval expired"
    ALERT_OPENED = "alert.opened", "Alert opened"
    ALERT_ACKNOWLEDGED = "alert.acknowledged", "Alert acknowledged"
    ALERT_RESOLVED = "alert.resolved", "Alert resolved"
    WEBHOOK_ENDPOINT_CREATED = "webhook.endpoint_created", "Webhook endpoint created"
    WEBHOOK_ENDPOINT_CHANGED = "webhook.endpoint_changed", "Webhook endpoint changed"
    WEBHOOK_SECRET_ROTATED = "webhook.secret_rotated", "Webhook secret rotated"
    WEBHOOK_REDELIVERED = "webhook.redelivered", "Webhook redelivered"
    LOGIN_LOCKED_OUT = "auth.locked_out", "User name locked out after failed log-ins"
    PERIODIC_TASK_CHANGED = "periodic_task.changed", "Periodic task changed"
    LOGGED_IN = "auth.logged_in", "Logged in"
    TOKEN_REFUSED = "auth.token_refused", "API token refused"
    TOKEN_CREATED = "auth.token_created", "API token made"
    TOKEN_DELETED = "auth.token_deleted", "API token deleted"


# The authentication log (audit.selectors.auth_event_list): these actions, every one about a user name
# (object_type "user", object_id the name as given, cut to 64 characters).
AUTH_ACTIONS = (AuditAction.LOGGED_IN, AuditAction.LOGIN_FAILED, AuditAction.LOGIN_LOCKED_OUT,
                AuditAction.TOKEN_REFUSED, AuditAction.TOKEN_CREATED, AuditAction.TOKEN_DELETED)


class AuthOutcome(models.TextChoices):
    """What became of an attempt or a change, as the authentication log's ``outcome`` names it."""

    SUCCEEDED = "succeeded", "Logged in"
    WRONG_PASSWORD = "wrong_password", "Wrong password"
    UNKNOWN_USER = "unknown_user", "Unknown user name"
    INACTIVE_USER = "inactive_user", "Inactive user"
    NOT_STAFF = "not_staff", "Right password, but not staff (an API client)"
    REFUSED_LOCKED = "refused_locked", "Refused unchecked: the name is locked from this address"
    REFUSED_SLOWED = "refused_slowed", "Refused unchecked: the name is slowed down"
    LOCKED_OUT = "locked_out", "User name locked out from an address"
    SLOWED = "slowed", "User name slowed down"
    UNKNOWN_TOKEN = "unknown_token", "Unknown API token"
    MALFORMED_TOKEN = "malformed_token", "Malformed Authorization header"
    TOKEN_CREATED = "token_created", "API token made"
    TOKEN_DELETED = "token_deleted", "API token deleted"
