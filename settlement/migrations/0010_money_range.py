"""Money columns widened to NUMERIC(20, 2): every value kept (see wallet.validators)."""


from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('settlement', '0009_accounts_move_to_wallet'),
    ]

    operations = [
        migrations.AlterField(
            model_name='settlementbatch',
            name='total_paid',
            field=models.DecimalField(decimal_places=2, default=0, max_digits=20, verbose_name='total paid out'),
        ),
        migrations.AlterField(
            model_name='settlementbatch',
            name='total_staked',
            field=models.DecimalField(decimal_places=2, default=0, max_digits=20, verbose_name='total staked'),
        ),
    ]
