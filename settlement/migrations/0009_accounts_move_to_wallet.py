"""Accounts and the ledger now belong to the wallet app (state only: the tables stay). A settlement
batch is written once, finished: its outcome is OK or FAILED, never the unused RUNNING."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("settlement", "0008_round_filter_indexes"),
        ("games", "0008_accounts_and_audit_move_out"),
        ("wallet", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.AlterField(
                model_name="activeaccountmonth",
                name="account",
                field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+",
                                        to="wallet.account"),
            ),
            migrations.DeleteModel(name="LedgerEntry"),
            migrations.DeleteModel(name="Account"),
        ]),
        migrations.RemoveConstraint(model_name="settlementbatch", name="batch_outcome_valid"),
        migrations.AlterField(
            model_name="settlementbatch",
            name="outcome",
            field=models.CharField(choices=[("ok", "OK"), ("failed", "Failed")], max_length=8),
        ),
        migrations.AddConstraint(
            model_name="settlementbatch",
            constraint=models.CheckConstraint(condition=models.Q(("outcome__in", ["ok", "failed"])),
                                              name="batch_outcome_valid"),
        ),
    ]
