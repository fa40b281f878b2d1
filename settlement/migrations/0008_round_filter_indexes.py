"""Indexes behind the admin's round filters at scale (a million bets, a hundred thousand rounds).

- ``decks``: the filter lists the shoe sizes played; with an index leading with the column,
  backoffice.admin.paginator walks it value by value instead of reading every round.
- ``outcome, id``: the filter by outcome counts its first 10,000 rounds from the index alone.

They belong to the games app's table but are created here, in the migration of the work that needs
them (plain SQL that PostgreSQL and SQLite both take); the models' state does not list them.
"""

from django.db import migrations

INDEXES = {
    "round_decks_filter_idx": "games_round (decks)",
    "round_outcome_filter_idx": "games_round (outcome, id)",
}


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0006_audit_append_only"),
        ("settlement", "0007_ledger_kind_index"),
    ]

    operations = [
        migrations.RunSQL(f"CREATE INDEX IF NOT EXISTS {name} ON {target}", f"DROP INDEX IF EXISTS {name}")
        for name, target in INDEXES.items()
    ]
