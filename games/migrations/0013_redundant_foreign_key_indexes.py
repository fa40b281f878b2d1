"""The foreign keys' own indexes go: composite indexes lead with each column (one write less per row)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from wallet.migration_operations import AlterForeignKeyIndex


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0012_held_bets'),
        ('wallet', '0003_redundant_foreign_key_indexes'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        AlterForeignKeyIndex(
            model_name='bet',
            name='account',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='bets', to='wallet.account'),
        ),
        AlterForeignKeyIndex(
            model_name='bet',
            name='client',
            field=models.ForeignKey(db_index=False, help_text='The integration client that placed the bet.', on_delete=django.db.models.deletion.PROTECT, related_name='bets_placed', to=settings.AUTH_USER_MODEL),
        ),
        AlterForeignKeyIndex(
            model_name='bet',
            name='round',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='bets', to='games.round'),
        ),
    ]
