"""Token authentication in one hand-written statement: the token, its user and the user's
permissions; the row is kept between requests until any of them changes
(backoffice.api.token_rows).

Every endpoint checks a permission (RolePermission) and the throttle reads the role from the
permissions, so each request would otherwise cost DRF's token query and ModelBackend's two
permission queries, each a round trip before any work. The permissions are read in the same
statement, exactly, and kept where ModelBackend keeps them for the rest of the request (each request
builds its own token and user from the row).

Every refusal (an unknown token, an inactive user, a malformed header) sends ``token_refused``
(with request=, outcome=, username= the inactive user's name or ""; never the token), which the
site records in the authentication log. An accepted token sends nothing.
"""

import functools

from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import DEFAULT_DB_ALIAS, connections
from django.dispatch import Signal
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from backoffice.api.token_rows import token_row
from dbutils.rows import row_loader

token_refused = Signal()  # sent with request=, outcome= (UNKNOWN, INACTIVE or MALFORMED), username=
UNKNOWN, INACTIVE, MALFORMED = "unknown_token", "inactive_user", "malformed_token"


class Refused(exceptions.AuthenticationFailed):
    """DRF's 401, naming why (``outcome``) and whose token it was, if known (``username``)."""

    def __init__(self, detail, outcome: str, username: str = ""):
        super().__init__(detail)
        self.outcome, self.username = outcome, username


def _permissions_of_u() -> str:
    """Every permission for a superuser, else those user ``u`` holds directly or by a group: what
    ModelBackend.get_all_permissions reads, as a JSON array of "app_label.codename" (NULL for none)."""
    return f"""(SELECT json_agg(ct.app_label || '.' || p.codename)
        FROM {Permission._meta.db_table} p JOIN {ContentType._meta.db_table} ct ON ct.id = p.content_type_id
        WHERE u.is_superuser
           OR p.id IN (SELECT permission_id FROM {User.user_permissions.through._meta.db_table} WHERE user_id = u.id
                       UNION SELECT gp.permission_id FROM {Group.permissions.through._meta.db_table} gp
                             JOIN {User.groups.through._meta.db_table} ug ON ug.group_id = gp.group_id
                             WHERE ug.user_id = u.id))"""


# What a request reads of the token and its user; the rest (the password hash, names, e-mail and
# dates) is deferred, loaded on first use as the ORM loads a deferred field.
_TOKEN_FIELDS = ("key", "user")
_USER_FIELDS = ("id", "username", "is_active", "is_staff", "is_superuser")


@functools.cache
def _token_statement(using: str = DEFAULT_DB_ALIAS) -> tuple[str, tuple]:
    token_fields = [field for field in Token._meta.concrete_fields if field.name in _TOKEN_FIELDS]
    user_fields = [field for field in User._meta.concrete_fields if field.name in _USER_FIELDS]
    quote = connections[using].ops.quote_name
    columns = ", ".join([f"t.{quote(field.column)}" for field in token_fields]
                        + [f"u.{quote(field.column)}" for field in user_fields] + [_permissions_of_u()])
    sql = (f"SELECT {columns} FROM {Token._meta.db_table} t JOIN {User._meta.db_table} u ON u.id = t.user_id "
           f"WHERE t.{quote(Token._meta.pk.column)} = %s")
    return sql, (row_loader(Token, token_fields, 0, using), row_loader(User, user_fields, len(token_fields), using))


def _read_row(key: str, using: str = DEFAULT_DB_ALIAS) -> tuple | None:
    with connections[using].cursor() as cursor:
        cursor.execute(_token_statement(using)[0], [key])
        return cursor.fetchone()


def _permission_set(value: list | None) -> set[str]:
    return set(value or ())


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token authentication, the same answers (401 for an unknown token or inactive user)."""

    def authenticate(self, request):
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed as refusal:
            # Once a request: the short way of a plain bet (backoffice.api.plain) tries the token before
            # DRF's dispatch tries it again.
            http_request = getattr(request, "_request", request)
            if not getattr(http_request, "token_refusal_sent", False):
                http_request.token_refusal_sent = True
                outcome, username = getattr(refusal, "outcome", MALFORMED), getattr(refusal, "username", "")
                token_refused.send(sender=TokenAuthentication, request=request, outcome=outcome, username=username)
            raise

    def authenticate_credentials(self, key):
        load_token, load_user = _token_statement()[1]
        row = token_row(key, _read_row)
        if row is None:
            raise Refused(_("Invalid token."), UNKNOWN)
        token, user = load_token(row), load_user(row)
        if not user.is_active:
            raise Refused(_("User inactive or deleted."), INACTIVE, user.username)
        token.user = user
        user._perm_cache = _permission_set(row[-1])
        return user, token
