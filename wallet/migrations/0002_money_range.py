"""Money columns widened to NUMERIC(20, 2): every value kept (see wallet.validators).

The embedded SQLite rebuilds a table to change a column, which drops its triggers: the ledger's
append-only trigger is put back there (PostgreSQL changes the column in place and keeps it)."""


from decimal import Decimal
from django.db import migrations, models

from audit.append_only import append_only


def ledger_append_only_again_on_sqlite(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        append_only("settlement_ledgerentry").code(apps, schema_editor)



class Migration(migrations.Migration):

    dependencies = [
        ('wallet', '0001_initial'),
    ]

    operations = [
        migrations.AlterField(
            model_name='account',
            name='balance',
            field=models.DecimalField(decimal_places=2, default=0, max_digits=20, verbose_name='balance'),
        ),
        migrations.AlterField(
            model_name='ledgerentry',
            name='amount',
            field=models.DecimalField(decimal_places=2, max_digits=20, verbose_name='amount'),
        ),
        migrations.AlterField(
            model_name='ledgerentry',
            name='balance_after',
            field=models.DecimalField(decimal_places=2, max_digits=20, verbose_name='balance after'),
        ),
        migrations.AddConstraint(
            model_name='ledgerentry',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('kind', 'ADJUSTMENT'), _negated=True), models.Q(('amount__gte', Decimal('-999999999999.99')), ('amount__lte', Decimal('999999999999.99'))), _connector='OR'), name='ledger_adjustment_within_max_balance'),
        ),
        migrations.RunPython(ledger_append_only_again_on_sqlite, migrations.RunPython.noop),
    ]
