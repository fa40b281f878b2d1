"""The audit events partitioned by month, in place (dbutils.partition_conversion,
docs/architecture/partitioning.md): the existing table becomes the legacy partition, every row kept
as it is, and the events from now on land in monthly partitions by their id, which carries the month
of the transaction that wrote them.

The Merkle leaves stay online for ever and keep their unique event id, but no longer a foreign key
to the events: it would forbid detaching an archived month (audit_verify checks instead that every
leaf's event is online with its hash, or archived in a month the signed log records). The hash chain
of the events from before the Merkle log stays unique through the legacy partition's unique indexes:
a CHECK on the table keeps every later event (every monthly partition's) without a chain hash.

Not atomic: the conversion's online steps commit one by one, and its exclusive step (catalog work
only, whatever the table's size) runs under a lock timeout."""

import django.db.models.deletion
from django.db import migrations, models

from dbutils.partition_conversion import convert_back, convert_in_place
from dbutils.partitions import month_of_id, month_start_id, next_month

TABLE = "games_auditevent"
CHAIN_CHECK = "audit_chain_only_in_legacy"


def partition(apps, schema_editor):
    alias = schema_editor.connection.alias
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"SELECT date_trunc('month', now())::date, (SELECT max(id) FROM {TABLE})")
        first_month, last_id = cursor.fetchone()
        if last_id is not None and last_id >= month_start_id(first_month):
            # Ids that carry a month already (a conversion rolled back): the legacy partition takes
            # their months too.
            first_month = next_month(month_of_id(last_id))
        # Validated by the conversion's online step, before the legacy heap is attached.
        cursor.execute(f"ALTER TABLE {TABLE} DROP CONSTRAINT IF EXISTS {CHAIN_CHECK}")
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {CHAIN_CHECK} CHECK ((hash IS NULL AND prev_hash IS NULL) "
                       f"OR id < {month_start_id(first_month)}) NOT VALID")
    convert_in_place(TABLE, first_month=first_month, using=alias)


def unpartition(apps, schema_editor):
    convert_back(TABLE, using=schema_editor.connection.alias)
    schema_editor.execute(f"ALTER TABLE {TABLE} DROP CONSTRAINT IF EXISTS {CHAIN_CHECK}")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("audit", "0008_api_token_actions"),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditleaf",
            name="event",
            field=models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.PROTECT,
                                       related_name="leaf", to="audit.auditevent"),
        ),
        migrations.RunPython(partition, unpartition),
    ]
