"""PostgreSQL: the pattern-operator indexes Django put beside the action's and the legacy hash's own
go. They serve LIKE 'prefix%' alone, and nothing looks these two up by prefix (the admin filters
the action exactly and finds a hash exactly, which the plain and unique indexes serve), while every
event paid two index writes for them. SQLite never had them."""

from django.db import migrations

TABLE = "games_auditevent"
PATTERN_INDEXES = {"games_auditevent_action_ad3c132f_like": "action", "games_auditevent_hash_9fb4f1ab_like": "hash"}


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for index in PATTERN_INDEXES:
            schema_editor.execute(f'DROP INDEX IF EXISTS "{index}"')


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for index, column in PATTERN_INDEXES.items():
            schema_editor.execute(
                f'CREATE INDEX IF NOT EXISTS "{index}" ON "{TABLE}" ("{column}" varchar_pattern_ops)')


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0004_held_bet_actions'),
    ]

    operations = [
        migrations.RunPython(drop, restore),
    ]
