"""The token table's change notices, and the tokens of DRF's authtoken table moved in as digests.

- Every statement that adds, deletes or truncates tokens, or changes any column but
  ``last_used_at``, NOTIFYs ``auth_changed`` (the function of backoffice 0001), so that web
  processes drop the token rows they keep (backoffice.api.token_rows); ``last_used_at``, written
  once a minute per token, empties nobody's.
- Each clear-text token of ``authtoken_token`` (the previous releases') becomes a row here: its
  HMAC-SHA256 digest under the current pepper of API_TOKEN_PEPPERS *at migration time* (so the
  environment must hold the production pepper when ``migrate`` runs), its first 8 characters, scope
  ``write`` (what the owner's role may do, as before), no address limit, and for a staff member's
  token the staff expiry (STAFF_TOKEN_DAYS from the upgrade); a game server's never expires. Then
  ``authtoken_token`` is dropped (no clear-text copy is left) and its app's migration records deleted,
  as if rest_framework.authtoken (no longer installed) had never been. Read with plain SQL: the app
  and its models are gone.
"""

import hashlib
import hmac
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import migrations
from django.utils import timezone

TABLE = "apitokens_apitoken"
NOTICED_COLUMNS = "owner_id, label, digest, prefix, scopes, expires_at, allowed_ips, enabled, created_at"


def notices(apps, schema_editor):
    schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_auth_changed ON {TABLE}", params=None)
    schema_editor.execute(
        f"CREATE TRIGGER {TABLE}_auth_changed AFTER INSERT OR UPDATE OF {NOTICED_COLUMNS} OR DELETE OR TRUNCATE "
        f"ON {TABLE} FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed()", params=None)


def no_notices(apps, schema_editor):
    schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_auth_changed ON {TABLE}", params=None)


def from_authtoken(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('authtoken_token') IS NOT NULL")
        if not cursor.fetchone()[0]:
            return
        cursor.execute("SELECT t.key, t.user_id, t.created, u.is_staff FROM authtoken_token t "
                       "JOIN auth_user u ON u.id = t.user_id ORDER BY t.created, t.key")
        rows = cursor.fetchall()
    if rows and not settings.API_TOKEN_PEPPERS:
        raise ImproperlyConfigured("API_TOKEN_PEPPERS is empty: the existing API tokens are kept as digests under "
                                   "its first pepper; set it (as production will) and run migrate again.")
    ApiToken = apps.get_model("apitokens", "ApiToken")
    now, pepper = timezone.now(), settings.API_TOKEN_PEPPERS[0].encode() if rows else b""
    staff_expiry = now + timedelta(days=settings.STAFF_TOKEN_DAYS) if settings.STAFF_TOKEN_DAYS > 0 else None
    ApiToken.objects.bulk_create(
        ApiToken(owner_id=user_id, label="made before tokens were digests", created_at=created,
                 digest=hmac.new(pepper, key.encode(), hashlib.sha256).hexdigest(), prefix=key[:8],
                 scopes=["write"], allowed_ips=[], expires_at=staff_expiry if is_staff else None)
        for key, user_id, created, is_staff in rows)
    schema_editor.execute("DROP TABLE authtoken_token", params=None)
    schema_editor.execute("DELETE FROM django_migrations WHERE app = 'authtoken'", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("apitokens", "0001_initial"),
        ("backoffice", "0001_auth_change_notices"),
    ]

    operations = [
        migrations.RunPython(notices, no_notices),
        # One way: the clear-text tokens are gone for good.
        migrations.RunPython(from_authtoken, migrations.RunPython.noop),
    ]
