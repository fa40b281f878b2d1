from django.db import models

from core.permissions import is_read_permission


class Scope(models.TextChoices):
    """What a token may be used for, within what its owner's role may do."""

    READ = "read", "Read"
    BETS = "bets", "Bets: open rounds, place bets (single and bulk), deal"
    WRITE = "write", "Write: everything the owner's role may do"


# The permissions of a game server's play (the bulk intake checks games.place_bet too).
BET_PERMISSIONS = frozenset({"games.open_round", "games.place_bet", "games.deal_round"})


def scopes_allow(scopes, permission: str) -> bool:
    """Whether a token of ``scopes`` may use ``permission`` ("app_label.codename"), which its owner
    must also hold: ``write`` covers everything, ``read`` the reads, ``bets`` a game server's play."""
    return (Scope.WRITE in scopes or (Scope.READ in scopes and is_read_permission(permission))
            or (Scope.BETS in scopes and permission in BET_PERMISSIONS))
