"""New client seeds keep to the safe alphabet (games.validators.CLIENT_SEED_PATTERN), in the database too.

A seed pair is committed: its client seed cannot be changed once published, and a pair an earlier
release made may have one outside the alphabet (spaces, quotes, any Unicode). Its row must still
take updates (the next nonce of every round it opens, its retirement and reveal), so the CHECK cannot
be added NOT VALID: PostgreSQL checks it on every changed row. Instead the CHECK exempts those rows by
id: ``client_seed ~ pattern OR id <= N``, N the largest id of a pair whose seed is outside the
alphabet when this runs (no such pair: the plain CHECK). It is validated against every row; every pair
made from now on must keep to the alphabet. The condition depends on the data, so the constraint
lives in the database only, not in the models' state (the field's validator states the rule).
"""

from django.db import migrations

CONSTRAINT = "seed_pair_client_seed_safe_alphabet"
# The same rule as games.validators.CLIENT_SEED_PATTERN, frozen as this migration wrote it.
PATTERN = "^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$"


def add_check(apps, schema_editor):
    SeedPair = apps.get_model("games", "SeedPair")
    table = schema_editor.quote_name(SeedPair._meta.db_table)
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"SELECT max(id) FROM {table} WHERE NOT (client_seed ~ %s)", [PATTERN])
        (legacy_up_to,) = cursor.fetchone()
    condition = f"client_seed ~ '{PATTERN}'"  # DDL takes no parameters; the pattern holds no quote
    if legacy_up_to is not None:
        condition = f"{condition} OR id <= {int(legacy_up_to)}"
    schema_editor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {CONSTRAINT} CHECK ({condition})")


def drop_check(apps, schema_editor):
    SeedPair = apps.get_model("games", "SeedPair")
    schema_editor.execute(
        f"ALTER TABLE {schema_editor.quote_name(SeedPair._meta.db_table)} DROP CONSTRAINT IF EXISTS {CONSTRAINT}")


class Migration(migrations.Migration):

    dependencies = [
        ("games", "0013_redundant_foreign_key_indexes"),
    ]

    operations = [
        migrations.RunPython(add_check, drop_check, elidable=False),
    ]
