"""The bets partitioned by month, in place, as the audit events were (audit 0009,
dbutils.partition_conversion, docs/architecture/partitioning.md): the existing table becomes the legacy
partition with every row, and the bets from now on land in monthly partitions by their id, which
carries the month of the transaction that wrote them (the id's database default: the statements that
insert bets directly, games.writes and the bulk path, need no change).

The ledger's foreign key to the bets is dropped and made again on the partitioned table (NOT VALID,
then validated online). The bets keep no unique index but their primary key: the idempotency key's
uniqueness per client lives in games_betkey (games 0015), whose primary key could not be the bets'
(a partitioned table's unique index must hold the partition key, the id).

Not atomic: the conversion's online steps commit one by one, and its exclusive step (catalog work
only, whatever the table's size) runs under a lock timeout."""

from django.db import migrations

from dbutils.partition_conversion import convert_back, convert_in_place, first_month

TABLE = "games_bet"


def partition(apps, schema_editor):
    alias = schema_editor.connection.alias
    convert_in_place(TABLE, first_month=first_month(TABLE, using=alias), using=alias)


def unpartition(apps, schema_editor):
    convert_back(TABLE, using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("games", "0015_bet_keys"),
        ("wallet", "0006_ledger_effects"),
    ]

    operations = [
        migrations.RunPython(partition, unpartition),
    ]
