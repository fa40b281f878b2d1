"""API tokens from the command line; the new token is printed once, as the last line.

    python manage.py api_token create USER [--scopes read,bets,write] [--expires-at ISO-8601]
                                           [--allowed-ips CIDR,...] [--label TEXT]
    python manage.py api_token list USER
    python manage.py api_token rotate ID [--overlap-hours H]
    python manage.py api_token revoke ID
"""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime
from django.utils.timezone import is_naive, make_aware

from apitokens import selectors, services
from apitokens.choices import Scope
from core.errors import Conflict

ACTOR = "system:api_token"


def _split(value: str | None) -> list:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def _time(value: str | None):
    if not value:
        return None
    try:
        parsed = parse_datetime(value)
    except ValueError:
        parsed = None
    if parsed is None:
        raise CommandError(f"--expires-at: {value!r} is not an ISO 8601 date and time (2027-03-01T00:00:00Z).")
    return make_aware(parsed) if is_naive(parsed) else parsed


def _errors(error: ValidationError | Conflict) -> str:
    return " ".join(f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items())


class Command(BaseCommand):
    help = "Make (printing the token last, once), list, rotate and revoke API tokens."

    def add_arguments(self, parser):
        commands = parser.add_subparsers(dest="action", required=True)
        create = commands.add_parser("create", help="a new token for USER; the token is the last line")
        create.add_argument("username")
        create.add_argument("--scopes", default=Scope.READ.value,
                            help="comma-separated: read, bets (open rounds, bet, bulk, deal), write "
                                 "(everything the role may do); default read. A read-only role gets read.")
        create.add_argument("--expires-at", help="ISO 8601; default: STAFF_TOKEN_DAYS for staff, never for a "
                                                 "game server (integration)")
        create.add_argument("--allowed-ips", help="comma-separated CIDRs the client must be in (default: any)")
        create.add_argument("--label", default="", help="what the token is for")
        listing = commands.add_parser("list", help="USER's tokens (never the tokens themselves)")
        listing.add_argument("username")
        rotate = commands.add_parser("rotate", help="a new token beside token ID, which expires after an overlap")
        rotate.add_argument("token_id", type=int)
        rotate.add_argument("--overlap-hours", type=float, help="default API_TOKEN_ROTATION_OVERLAP_HOURS")
        revoke = commands.add_parser("revoke", help="disable token ID for good")
        revoke.add_argument("token_id", type=int)

    def handle(self, *args, action, **options):
        try:
            getattr(self, f"_{action}")(**options)
        except (ValidationError, Conflict) as error:
            raise CommandError(_errors(error)) from None

    def _user(self, username: str):
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        return user

    def _create(self, *, username, scopes, expires_at=None, allowed_ips=None, label="", **options):
        token, secret = services.token_create(owner=self._user(username), actor=ACTOR, scopes=_split(scopes),
                                              expires_at=_time(expires_at), allowed_ips=_split(allowed_ips),
                                              label=label)
        self._describe(token, "Made")
        self.stdout.write("API token (shown once; send it as 'Authorization: Token <token>'):")
        self.stdout.write(secret)

    def _list(self, *, username, **options):
        tokens = selectors.token_list(owner=self._user(username))
        if not tokens:
            self.stdout.write(f"{username} has no API token.")
        for token in tokens:
            self._describe(token, "")

    def _rotate(self, *, token_id, overlap_hours=None, **options):
        token, secret = services.token_rotate(token_id=token_id, actor=ACTOR, overlap_hours=overlap_hours)
        self.stdout.write(f"Rotated #{token_id}: it keeps working until its expiry, then stops.")
        self._describe(token, "Made")
        self.stdout.write("API token (shown once; send it as 'Authorization: Token <token>'):")
        self.stdout.write(secret)

    def _revoke(self, *, token_id, **options):
        token = services.token_revoke(token_id=token_id, actor=ACTOR)
        self.stdout.write(f"Revoked #{token.pk} of {token.owner.get_username()}.")

    def _describe(self, token, verb: str):
        expiry = token.expires_at.isoformat() if token.expires_at else "never"
        used = token.last_used_at.isoformat() if token.last_used_at else "never"
        state = "enabled" if token.enabled else "revoked"
        line = (f"#{token.pk} {token.prefix}… of {token.owner.get_username()}: scopes {','.join(token.scopes)}; "
                f"expires {expiry}; addresses {','.join(token.allowed_ips) or 'any'}; last used {used}; {state}")
        self.stdout.write(f"{verb} {line}".strip() + (f" ({token.label})" if token.label else ""))
