"""Accounts and the ledger move here from the settlement app: the state only, with their content
types (so granted permissions stay); the tables keep their names (settlement_account,
settlement_ledgerentry) and every row, and the ledger's foreign key to the bets stays in the
database while the model holds the bet's id alone (the wallet knows nothing of games)."""

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models

from audit.app_move import move_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("settlement", "0008_round_filter_indexes"),
        ("games", "0007_admin_search_indexes"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        move_content_types("settlement", "wallet", ["account", "ledgerentry"]),
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='Account',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('external_id', models.CharField(max_length=100, unique=True)),
                    ('currency', models.CharField(default='USD', max_length=3, validators=[django.core.validators.RegexValidator('^[A-Z]{3}\\Z', 'Enter an ISO 4217 code: three capital letters.')])),
                    ('balance', models.DecimalField(decimal_places=2, default=0, max_digits=14, verbose_name='balance')),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                ],
                options={
                    'db_table': 'settlement_account',
                    'ordering': ['external_id'],
                    'permissions': [('adjust_account', 'Can adjust account balances')],
                    'constraints': [models.CheckConstraint(condition=models.Q(('balance__gte', 0)), name='account_balance_non_negative'), models.CheckConstraint(condition=models.Q(('currency__regex', '^[A-Z]{3}$')), name='account_currency_iso4217')],
                },
            ),
            migrations.CreateModel(
                name='LedgerEntry',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('bet_id', models.BigIntegerField(blank=True, null=True)),
                    ('kind', models.CharField(choices=[('STAKE', 'Stake (debit)'), ('PAYOUT', 'Payout (credit)'), ('REFUND', 'Refund (credit)'), ('ADJUSTMENT', 'Adjustment')], max_length=10)),
                    ('amount', models.DecimalField(decimal_places=2, max_digits=14, verbose_name='amount')),
                    ('balance_after', models.DecimalField(decimal_places=2, max_digits=14, verbose_name='balance after')),
                    ('reason', models.TextField(blank=True)),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                    ('account', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='ledger', to='wallet.account')),
                ],
                options={
                    'verbose_name_plural': 'ledger entries',
                    'db_table': 'settlement_ledgerentry',
                    'ordering': ['-id'],
                    'indexes': [models.Index(fields=['account', '-id'], name='ledger_account_idx'), models.Index(fields=['kind', '-id'], name='ledger_kind_idx')],
                    'constraints': [models.UniqueConstraint(fields=('bet_id', 'kind'), name='ledger_one_effect_per_bet_and_kind'), models.CheckConstraint(condition=models.Q(('kind__in', ['STAKE', 'PAYOUT', 'REFUND', 'ADJUSTMENT'])), name='ledger_kind_valid'), models.CheckConstraint(condition=models.Q(('balance_after__gte', 0)), name='ledger_balance_non_negative'), models.CheckConstraint(condition=models.Q(models.Q(('bet_id__isnull', True), ('kind', 'ADJUSTMENT')), models.Q(models.Q(('kind', 'ADJUSTMENT'), _negated=True), ('bet_id__isnull', False)), _connector='OR'), name='ledger_bet_xor_adjustment'), models.CheckConstraint(condition=models.Q(models.Q(('amount__lt', 0), ('kind', 'STAKE')), models.Q(('amount__gt', 0), ('kind__in', ['PAYOUT', 'REFUND'])), models.Q(('kind', 'ADJUSTMENT'), models.Q(('amount', 0), _negated=True)), _connector='OR'), name='ledger_amount_sign_matches_kind')],
                },
            ),
        ]),
    ]
