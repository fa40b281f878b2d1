"""Money columns widened to NUMERIC(20, 2) (every value kept), a maximum stake on the games' bet
limits and an alphabet for idempotency keys. The two CHECKs are added NOT VALID on PostgreSQL:
rows an earlier release accepted are kept as they were; every new or changed row is checked."""


import django.core.validators
import wallet.validators
from decimal import Decimal
from django.conf import settings
from django.db import migrations, models

from wallet.migration_operations import AddConstraintNotValid


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0008_accounts_and_audit_move_out'),
        ('wallet', '0002_money_range'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='bet',
            name='idempotency_key',
            field=models.CharField(max_length=100, validators=[django.core.validators.RegexValidator('^[!-~]{1,100}\\Z', 'Must be 1 to 100 visible ASCII characters (! to ~): no spaces or control characters.', code='invalid_idempotency_key')]),
        ),
        migrations.AlterField(
            model_name='bet',
            name='payout',
            field=models.DecimalField(blank=True, decimal_places=2, help_text='Returned, stake included.', max_digits=20, null=True, verbose_name='payout'),
        ),
        migrations.AlterField(
            model_name='bet',
            name='stake',
            field=models.DecimalField(decimal_places=2, max_digits=20, validators=[wallet.validators.validate_stake], verbose_name='stake'),
        ),
        migrations.AlterField(
            model_name='gameinstance',
            name='max_bet',
            field=models.DecimalField(decimal_places=2, help_text='At most 1000000.00.', max_digits=20, validators=[wallet.validators.validate_stake], verbose_name='maximum bet'),
        ),
        migrations.AlterField(
            model_name='gameinstance',
            name='min_bet',
            field=models.DecimalField(decimal_places=2, max_digits=20, validators=[wallet.validators.validate_stake], verbose_name='minimum bet'),
        ),
        AddConstraintNotValid(
            model_name='bet',
            constraint=models.CheckConstraint(condition=models.Q(('idempotency_key__regex', '^[!-~]{1,100}$')), name='bet_idempotency_key_visible_ascii'),
        ),
        AddConstraintNotValid(
            model_name='gameinstance',
            constraint=models.CheckConstraint(condition=models.Q(('max_bet__lte', Decimal('1000000.00'))), name='game_max_bet_within_max_stake'),
        ),
    ]
