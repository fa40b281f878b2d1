"""Indexes behind the admin's searches at scale (a million bets, a million audit events).

Each search of a big list is a union of exact lookups by index (backoffice.admin.search.indexed_search); these
are the columns it looks up that no index led with:

- ``games_bet (idempotency_key)``: the unique (client, idempotency_key) leads with the client.
- ``games_auditevent (object_id)``: audit_object_idx leads with the object type.
- ``games_auditevent (request_id)``.
- ``games_auditevent (actor)``, for the actor's exact name and its beginning (``LIKE 'olivia%'``):
  with ``varchar_pattern_ops`` on PostgreSQL, whose plain btree serves ``LIKE`` only in the C
  collation; SQLite has no operator classes and takes the plain index.

Plain SQL, as in settlement.0008: the models' state does not list them.
"""

from django.db import migrations

INDEXES = {
    "bet_idempotency_key_idx": ("games_bet", "idempotency_key"),
    "audit_object_id_idx": ("games_auditevent", "object_id"),
    "audit_request_id_idx": ("games_auditevent", "request_id"),
    "audit_actor_idx": ("games_auditevent", "actor"),
}
PATTERN_OPS = {"audit_actor_idx": "varchar_pattern_ops"}


def create(apps, schema_editor):
    for name, (table, column) in INDEXES.items():
        opclass = PATTERN_OPS.get(name, "") if schema_editor.connection.vendor == "postgresql" else ""
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({column} {opclass})".replace(" )", ")"))


def drop(apps, schema_editor):
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0006_audit_append_only"),
    ]

    operations = [migrations.RunPython(create, drop)]
