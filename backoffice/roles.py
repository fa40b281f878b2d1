"""The roles: one group each, and the permissions each group holds (the role matrix).

Every API endpoint and admin page checks a permission from this table, so the matrix lives here
and nowhere else. ``sync_role_groups`` is idempotent: a migration runs it, and so does every
``migrate`` afterwards (post_migrate), to pick up permissions added later.
"""

from django.core.exceptions import ImproperlyConfigured
from django.db import models

from core.permissions import READ_PERMISSIONS, is_read_permission  # noqa: F401 - the roles' reads, re-exported


class Role(models.TextChoices):
    """Each role is a group of the same name, created by a migration."""

    OPERATOR = "operator", "Operators"
    SUPPORT = "support", "Support"
    INTEGRATION = "integration", "Integration"
    ADMIN = "admin", "Administrators"
    REGULATOR = "regulator", "Regulators"

    @property
    def group_name(self) -> str:
        return self.label


READ_ALL = [
    "games.view_gameinstance", "games.view_seedpair", "games.view_round", "games.view_bet",
    "audit.view_auditevent", "wallet.view_account", "wallet.view_ledgerentry",
    "settlement.view_settlementbatch", "approvals.view_approval", "games.view_rtppolicy",
    "alerts.view_alert", "alerts.view_incident", "webhooks.view_endpoint", "webhooks.view_delivery",
    "webhooks.view_event",
]

# The operations dashboard (GGR, return to player against the exact odds, outcome tests).
DASHBOARD = ["settlement.view_dashboard"]

ROLE_PERMISSIONS = {
    Role.OPERATOR: READ_ALL + DASHBOARD + [
        "games.add_gameinstance", "games.change_gameinstance", "games.rotate_seeds",
        "games.void_round", "games.verify_round", "games.settle_held_bet",
        "wallet.add_account", "wallet.adjust_account", "settlement.request_sweep",
        "approvals.approve_approval", "alerts.handle_alert", "webhooks.change_delivery",
        # An integration client's endpoints, configured for it in the admin (the client owns them).
        "webhooks.add_endpoint", "webhooks.change_endpoint",
        "django_celery_beat.view_periodictask", "django_celery_beat.change_periodictask",
        "django_celery_beat.view_intervalschedule", "django_celery_beat.add_intervalschedule",
        "django_celery_beat.view_crontabschedule", "django_celery_beat.add_crontabschedule",
    ],
    Role.SUPPORT: READ_ALL + DASHBOARD + ["games.verify_round"],
    Role.INTEGRATION: [
        "games.view_gameinstance", "games.view_seedpair", "games.view_round", "games.view_bet",
        "wallet.view_account", "wallet.view_ledgerentry",
        "games.open_round", "games.deal_round", "games.place_bet", "games.verify_round",
        "wallet.add_account",
        "webhooks.view_endpoint", "webhooks.add_endpoint", "webhooks.change_endpoint", "webhooks.view_delivery",
    ],
    Role.ADMIN: None,  # every permission there is
    # Reads every list, round, recall, export, report, audit event, head and proof, and who holds
    # which role; changes nothing (a READ_ONLY_ROLES role), so its tokens can only read.
    Role.REGULATOR: READ_ALL + DASHBOARD + ["games.verify_round"] + [
        "django_celery_beat.view_periodictask", "django_celery_beat.view_intervalschedule",
        "django_celery_beat.view_crontabschedule", "auth.view_user", "auth.view_group",
        "audit.view_authevent",  # the authentication log (administrators hold it too)
        "apitokens.view_apitoken",  # who holds which token, its scopes, expiry and addresses (never the token)
    ],
}

# Roles that change nothing: each of their permissions is a read (sync_role_groups refuses
# anything else), so no write of the API or the admin answers them, by session or token.
READ_ONLY_ROLES = {Role.SUPPORT, Role.REGULATOR}

# Roles whose members use the admin site (is_staff); integration clients use the API only.
STAFF_ROLES = {Role.OPERATOR, Role.SUPPORT, Role.ADMIN, Role.REGULATOR}


def sync_role_groups(apps) -> None:
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for role, codes in ROLE_PERMISSIONS.items():
        if role in READ_ONLY_ROLES and not all(is_read_permission(code) for code in codes):
            raise ImproperlyConfigured(f"The role {role.value} changes nothing: it may hold only view permissions.")
        group, _created = Group.objects.get_or_create(name=role.group_name)
        if codes is None:
            group.permissions.set(Permission.objects.all())
            continue
        wanted = []
        for code in codes:
            app_label, codename = code.split(".")
            wanted.extend(
                Permission.objects.filter(content_type__app_label=app_label, codename=codename)
            )
        group.permissions.set(wanted)
