"""Token authentication in two hand-written statements: the token with its user, then the user's
permissions.

Every endpoint checks a permission (RolePermission) and the throttle reads the role from the
permissions, so each request would otherwise cost DRF's token query and ModelBackend's two
permission queries. The permissions are read here in one statement, exactly (nothing outlives the
request), and kept where ModelBackend keeps them for the rest of the request.
"""

import functools

from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from dbutils.rows import row_loader


@functools.cache
def _token_statement() -> tuple[str, tuple]:
    token_fields, user_fields = Token._meta.concrete_fields, User._meta.concrete_fields
    quote = connection.ops.quote_name
    columns = ", ".join([f"t.{quote(field.column)}" for field in token_fields]
                        + [f"u.{quote(field.column)}" for field in user_fields])
    sql = (f"SELECT {columns} FROM {Token._meta.db_table} t JOIN {User._meta.db_table} u ON u.id = t.user_id "
           f"WHERE t.{quote(Token._meta.pk.column)} = %s")
    return sql, (row_loader(Token, token_fields, 0), row_loader(User, user_fields, len(token_fields)))


@functools.cache
def _permissions_statement(*, every: bool) -> str:
    """The (app label, codename) of every permission, or of those a user holds directly or by a group."""
    every_permission = f"""
        SELECT ct.app_label, p.codename FROM {Permission._meta.db_table} p
        JOIN {ContentType._meta.db_table} ct ON ct.id = p.content_type_id"""
    if every:
        return every_permission
    return every_permission + f"""
        WHERE p.id IN (SELECT permission_id FROM {User.user_permissions.through._meta.db_table} WHERE user_id = %s
                       UNION SELECT gp.permission_id FROM {Group.permissions.through._meta.db_table} gp
                             JOIN {User.groups.through._meta.db_table} ug ON ug.group_id = gp.group_id
                             WHERE ug.user_id = %s)"""


def prime_permissions(user) -> None:
    """Load what ModelBackend.get_all_permissions would (every permission for a superuser), in one
    statement, where it caches it."""
    with connection.cursor() as cursor:
        if user.is_superuser:
            cursor.execute(_permissions_statement(every=True))
        else:
            cursor.execute(_permissions_statement(every=False), [user.pk, user.pk])
        user._perm_cache = {f"{app_label}.{codename}" for app_label, codename in cursor.fetchall()}


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token authentication, the same answers (401 for an unknown token or inactive user)."""

    def authenticate_credentials(self, key):
        sql, (load_token, load_user) = _token_statement()
        with connection.cursor() as cursor:
            cursor.execute(sql, [key])
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        token, user = load_token(row), load_user(row)
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        token.user = user
        prime_permissions(user)
        return user, token
