"""Create a user in one role and print its API token on the last line.

    python manage.py create_staff_user USERNAME --role operator|support|integration|admin|regulator [--password P]

Operators, support staff, administrators and regulators may sign in to the admin (is_staff);
administrators are also superusers; regulators read everything and change nothing. Integration
clients use the API only. Without ``--password`` the password is asked for twice. The last line
of the output is the API token alone (shown this once: the database keeps only its digest), so
scripts can take it with ``tail -n 1``. Its scopes are ``write`` (everything the role may do; a
read-only role's token reads only) unless ``--scopes`` says otherwise; a staff member's expires after
STAFF_TOKEN_DAYS, a game server's (integration) never (apitokens.services). ``--totp`` enrols a staff
member's second factor at once (backoffice.second_factor): its otpauth:// URI on a line of its own, for
the person to scan, then their recovery codes; without it they enrol at their first log-in.
"""

import getpass

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError, transaction

from apitokens.choices import Scope
from apitokens.services import token_create
from audit.context import acting_as
from backoffice import second_factor
from backoffice.roles import STAFF_ROLES, Role

ACTOR = "system:create_staff_user"


def create_staff_user(*, username: str, role: Role, password: str, email: str = "", actor: str = ACTOR,
                      scopes=(Scope.WRITE,)):
    """Create the user, its group membership and its token in one transaction; returns (user, the
    token to show once)."""
    User = get_user_model()
    role = Role(role)
    try:
        group = Group.objects.get(name=role.group_name)
    except Group.DoesNotExist:
        raise CommandError(f"The group {role.group_name!r} does not exist; run `manage.py migrate` first.") from None
    # The user, its role and the audit events Django's signals record for both: one transaction.
    with transaction.atomic(), acting_as(actor):
        if User.objects.filter(username=username).exists():
            raise CommandError(f"A user named {username!r} already exists.")
        user = User(username=username, email=email, is_staff=role in STAFF_ROLES, is_superuser=role == Role.ADMIN)
        user.set_password(password)
        try:
            user.full_clean(exclude=["password"])
        except ValidationError as error:
            raise CommandError(" ".join(f"{field}: {' '.join(messages)}" for field, messages
                                        in error.message_dict.items())) from None
        try:
            with transaction.atomic():
                user.save()
        except IntegrityError:
            raise CommandError(f"A user named {username!r} already exists.") from None
        user.groups.add(group)
        _token, secret = token_create(owner=user, actor=actor, scopes=scopes, label="made with the user")
    return user, secret


class Command(BaseCommand):
    help = "Create a user in a role (operator, support, integration, admin, regulator) and print its API token last."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=Role.values,
                            help="operator, support, admin or regulator sign in to the admin; "
                                 "integration uses the API only.")
        parser.add_argument("--password", help="The password; asked for (twice) when omitted.")
        parser.add_argument("--email", default="")
        parser.add_argument("--scopes", default=Scope.WRITE.value,
                            help="the token's scopes, comma-separated: read, bets, write (default: write, "
                                 "everything the role may do)")
        parser.add_argument("--totp", action="store_true",
                            help="enrol the person's second factor now: prints its otpauth:// URI (to scan with "
                                 "an authenticator app) and recovery codes; without it they enrol at first log-in")

    def handle(self, *args, username, role, password=None, email="", scopes=Scope.WRITE.value, totp=False,
               **options):
        User = get_user_model()
        username = username.strip()
        if not username:
            raise CommandError("The username must not be empty.")
        if User.objects.filter(username=username).exists():
            raise CommandError(f"A user named {username!r} already exists.")
        role = Role(role)
        if totp and role not in STAFF_ROLES:
            raise CommandError("--totp is for people who sign in to the admin; an integration client has no "
                               "second factor.")
        candidate = User(username=username, email=email)
        if password is None:
            password = self._prompt_password(candidate)
        else:
            self._validate_password(password, candidate)
        scopes = [scope.strip() for scope in scopes.split(",") if scope.strip()]
        try:
            user, token = create_staff_user(username=username, role=role, password=password, email=email,
                                            scopes=scopes)
        except ValidationError as error:
            raise CommandError(" ".join(" ".join(messages) for messages in error.message_dict.values())) from None
        kind = "superuser and staff" if user.is_superuser else ("staff" if user.is_staff else "API client, no admin")
        self.stdout.write(f"Created {username!r} in the group {role.group_name!r} ({kind}).")
        if totp:
            self._enrol(user)
        self.stdout.write("API token (shown once; send it as 'Authorization: Token <token>'):")
        self.stdout.write(token)

    def _enrol(self, user):
        device, codes = second_factor.enrol(user, by=ACTOR)
        self.stdout.write("Second factor: scan this URI with an authenticator app (as a QR code, e.g. "
                          "`qrencode -t ansiutf8`), or type in its secret:")
        self.stdout.write(second_factor.otpauth_uri(device))
        self.stdout.write("Recovery codes (each works once): " + " ".join(codes))

    def _validate_password(self, password, user):
        if not password:
            raise CommandError("The password must not be empty.")
        try:
            password_validation.validate_password(password, user)
        except ValidationError as error:
            raise CommandError("The password is not accepted: " + " ".join(error.messages)) from None

    def _prompt_password(self, user) -> str:
        try:
            first = getpass.getpass("Password: ")
            second = getpass.getpass("Password (again): ")
        except (EOFError, KeyboardInterrupt):
            raise CommandError("No password given; use --password or run the command in a terminal.") from None
        if first != second:
            raise CommandError("The two passwords do not match.")
        self._validate_password(first, user)
        return first
