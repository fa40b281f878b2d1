"""API token authentication in one hand-written statement: the token (found by its keyed digest),
its owner and the owner's permissions; the row is kept between requests until any of them changes
(backoffice.api.token_rows, keyed by the digest under the current pepper).

Every endpoint checks a permission (RolePermission) and the throttle reads the role from the
permissions, so each request would otherwise cost a token query and ModelBackend's two permission
queries, each a round trip before any work. The permissions are read in the same statement, exactly,
and kept where ModelBackend keeps them for the rest of the request (each request builds its own token
and user from the row). The digest is computed once a request (apitokens.digests); the earlier
peppers only for a token the current one does not find, which is then re-digested under it.

A token is refused (401, and an event of the authentication log) when unknown, disabled (revoked),
expired, used from an address outside its allowed CIDRs (the client's address as TRUSTED_PROXIES
define it), or when its owner is inactive; used beyond its scopes, RolePermission refuses it (403).
``last_used_at`` is written at most once a minute per token and process, in a statement of its own
that PostgreSQL notices to nobody (the token table's trigger leaves that column out).
"""

import functools
import math
import time

from django.contrib.auth.models import User
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils.translation import gettext_lazy as _

from apitokens import digests
from apitokens.models import ApiToken
from backoffice.addresses import client_address
from backoffice.api import authentication
from backoffice.api.token_rows import token_row
from dbutils.rows import row_loader

LAST_USED_EVERY_SECONDS = 60

# What a request reads of the token and its owner; the rest is deferred, loaded on first use.
_TOKEN_FIELDS = ("id", "owner", "digest", "scopes", "expires_at", "allowed_ips", "enabled")
_USER_FIELDS = ("id", "username", "is_active", "is_staff", "is_superuser")

# The process's last write of each token's last_used_at (by digest), in monotonic seconds.
_last_written: dict = {}


@functools.cache
def _token_statement(using: str = DEFAULT_DB_ALIAS) -> tuple[str, tuple]:
    token_fields = [field for field in ApiToken._meta.concrete_fields if field.name in _TOKEN_FIELDS]
    user_fields = [field for field in User._meta.concrete_fields if field.name in _USER_FIELDS]
    quote = connections[using].ops.quote_name
    columns = ", ".join([f"t.{quote(field.column)}" for field in token_fields]
                        + [f"u.{quote(field.column)}" for field in user_fields] + [authentication.permissions_of_u()])
    sql = (f"SELECT {columns} FROM {ApiToken._meta.db_table} t JOIN {User._meta.db_table} u "
           f"ON u.id = t.{quote(ApiToken._meta.get_field('owner').column)} WHERE t.digest = ANY(%s)")
    return sql, (row_loader(ApiToken, token_fields, 0, using),
                 row_loader(User, user_fields, len(token_fields), using))


def _read_row(key: str, current: str, using: str = DEFAULT_DB_ALIAS) -> tuple | None:
    candidates = [current, *(digests.digest(key, pepper) for pepper in digests.pepper_keys()[1:])]
    with connections[using].cursor() as cursor:
        cursor.execute(_token_statement(using)[0], [candidates])
        return cursor.fetchone()


def _execute(sql: str, params: list, using: str = DEFAULT_DB_ALIAS) -> None:
    with connections[using].cursor() as cursor:
        cursor.execute(sql, params)


def _redigest(token: ApiToken, current: str) -> None:
    """A token found under an earlier pepper is kept under the current one from now on."""
    _execute(f"UPDATE {ApiToken._meta.db_table} SET digest = %s WHERE id = %s AND digest = %s",
             [current, token.pk, token.digest])
    token.digest = current


def _mark_used(token: ApiToken) -> None:
    now = time.monotonic()
    if now - _last_written.get(token.digest, -math.inf) < LAST_USED_EVERY_SECONDS:
        return
    _last_written[token.digest] = now
    _execute(f"UPDATE {ApiToken._meta.db_table} SET last_used_at = now() WHERE id = %s "
             f"AND (last_used_at IS NULL OR last_used_at < now() - interval '{LAST_USED_EVERY_SECONDS} seconds')",
             [token.pk])


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token header and answers (401 for an unknown token or inactive user), on ApiToken."""

    def authenticate_credentials(self, key):
        current = digests.digest(key)
        row = token_row(current, lambda _digest: _read_row(key, current))
        if row is None:
            raise authentication.Refused(_("Invalid token."), authentication.UNKNOWN)
        load_token, load_user = _token_statement()[1]
        token, user = load_token(row), load_user(row)
        token.owner = user
        refusal = self._refusal(token, user)
        if refusal is not None:
            raise authentication.Refused(refusal[1], refusal[0], user.get_username(), token.pk)
        if token.digest != current:
            _redigest(token, current)
        _mark_used(token)
        user._perm_cache = set(row[-1] or ())
        return user, token

    def _refusal(self, token: ApiToken, user) -> tuple | None:
        if not token.enabled:
            return authentication.DISABLED, _("Token revoked.")
        if not user.is_active:
            return authentication.INACTIVE, _("User inactive or deleted.")
        if token.expires_at is not None and token.expired():
            return authentication.EXPIRED, _("Token expired.")
        if token.allowed_ips and not token.allows_address(client_address(self.request)):
            return authentication.WRONG_ADDRESS, _("Token not allowed from this address.")
        return None
