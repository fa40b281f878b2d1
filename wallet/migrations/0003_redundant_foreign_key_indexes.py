"""The foreign keys' own indexes go: composite indexes lead with each column (one write less per row)."""

import django.db.models.deletion
from django.db import migrations, models

from wallet.migration_operations import AlterForeignKeyIndex


class Migration(migrations.Migration):

    dependencies = [
        ('wallet', '0002_money_range'),
    ]

    operations = [
        AlterForeignKeyIndex(
            model_name='ledgerentry',
            name='account',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='ledger', to='wallet.account'),
        ),
    ]
