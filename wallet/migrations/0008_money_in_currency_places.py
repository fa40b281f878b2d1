"""Money columns widened from NUMERIC(20, 2) to NUMERIC(26, 8), every value kept exactly (see
wallet.validators and core.currencies), and currency codes of 3 to 8 characters. PostgreSQL rewrites
the tables under their lock; the ledger's append-only trigger does not fire on it (no row is
updated, the column's type changes)."""

import wallet.validators
import wallet.fields
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('wallet', '0007_ledger_partitioned_by_month'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='account',
            name='account_currency_iso4217',
        ),
        migrations.AlterField(
            model_name='account',
            name='balance',
            field=wallet.fields.MoneyField(decimal_places=8, default=0, max_digits=26, verbose_name='balance'),
        ),
        migrations.AlterField(
            model_name='account',
            name='currency',
            field=models.CharField(default='USD', max_length=8, validators=[wallet.validators.validate_currency]),
        ),
        migrations.AlterField(
            model_name='ledgerentry',
            name='amount',
            field=wallet.fields.MoneyField(decimal_places=8, max_digits=26, verbose_name='amount'),
        ),
        migrations.AlterField(
            model_name='ledgerentry',
            name='balance_after',
            field=wallet.fields.MoneyField(decimal_places=8, max_digits=26, verbose_name='balance after'),
        ),
        migrations.AddConstraint(
            model_name='account',
            constraint=models.CheckConstraint(condition=models.Q(('currency__regex', '^[A-Z][A-Z0-9]{2,7}$')), name='account_currency_code'),
        ),
    ]
