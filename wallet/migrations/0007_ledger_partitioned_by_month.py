"""The ledger partitioned by month, in place, after the bets (games 0016; the same conversion as the
audit events', audit 0009): the existing table becomes the legacy partition with every entry, new
entries land in monthly partitions by their id (its database default carries the month), and the
append-only trigger is made on the partitioned table, which clones it to every partition.

The foreign key to the bets, both tables partitioned now, is made on the partitioned ledger (the
legacy partition's, validated when the bets were converted, is attached to it). The one money effect
per bet and kind stays in wallet_ledgereffect (wallet 0006): a unique (bet_id, kind) on the ledger
could not hold its partition key, and a payout may come in the month after its stake.

Not atomic, as the bets' conversion."""

from django.db import migrations

from dbutils.partition_conversion import convert_back, convert_in_place, first_month

TABLE = "settlement_ledgerentry"


def partition(apps, schema_editor):
    alias = schema_editor.connection.alias
    convert_in_place(TABLE, first_month=first_month(TABLE, using=alias), using=alias)


def unpartition(apps, schema_editor):
    convert_back(TABLE, using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("wallet", "0006_ledger_effects"),
        ("games", "0016_bets_partitioned_by_month"),
    ]

    operations = [
        migrations.RunPython(partition, unpartition),
    ]
