"""Bets now point at wallet.Account and the audit trail lives in the audit app (state only: the
tables and their foreign keys do not change). The indexes that plain SQL created in games.0007 and
settlement.0008 enter the models' state, under the same names."""

import django.db.models.deletion
from django.db import migrations, models

import games.validators


class Migration(migrations.Migration):

    dependencies = [
        ("games", "0007_admin_search_indexes"),
        ("settlement", "0008_round_filter_indexes"),
        ("wallet", "0001_initial"),
        ("audit", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.AlterField(
                model_name="bet",
                name="account",
                field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="bets",
                                        to="wallet.account"),
            ),
            migrations.DeleteModel(name="AuditEvent"),
            migrations.AddIndex(
                model_name="bet",
                index=models.Index(fields=["idempotency_key"], name="bet_idempotency_key_idx"),
            ),
            migrations.AddIndex(
                model_name="round",
                index=models.Index(fields=["decks"], name="round_decks_filter_idx"),
            ),
            migrations.AddIndex(
                model_name="round",
                index=models.Index(fields=["outcome", "id"], name="round_outcome_filter_idx"),
            ),
        ]),
        migrations.AlterField(
            model_name="seedpair",
            name="client_seed",
            field=models.CharField(max_length=64, validators=[games.validators.validate_client_seed_field]),
        ),
    ]
