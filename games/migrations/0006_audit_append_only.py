"""The audit trail is append-only in the database itself."""

from django.db import migrations

from audit.append_only import append_only


class Migration(migrations.Migration):
    dependencies = [("games", "0005_audit_hash_chain")]

    operations = [append_only("games_auditevent")]
