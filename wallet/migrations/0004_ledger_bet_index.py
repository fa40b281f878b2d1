"""The ledger's bet_id loses the index of its own that the first release gave its foreign key: the
unique (bet_id, kind) leads with the column and serves every lookup by bet, so each entry is one
index write less. The foreign key itself stays."""

from django.db import migrations

TABLE, INDEX = "settlement_ledgerentry", "settlement_ledgerentry_bet_id_1ef9e07a"


class Migration(migrations.Migration):

    dependencies = [
        ('wallet', '0003_redundant_foreign_key_indexes'),
    ]

    operations = [
        migrations.RunSQL(f'DROP INDEX IF EXISTS "{INDEX}"', f'CREATE INDEX IF NOT EXISTS "{INDEX}" ON "{TABLE}" ("bet_id")'),
    ]
