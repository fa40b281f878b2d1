"""An account's adjustments over a window, read before each adjustment (four eyes: the adjustments
over APPROVAL_ADJUSTMENT_WINDOW_HOURS add up towards the threshold): a partial index holding
adjustments only, so that no bet's entry costs an index write more."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("wallet", "0004_ledger_bet_index"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="ledgerentry",
            index=models.Index(condition=models.Q(("kind", "ADJUSTMENT")), fields=["account", "created_at"],
                               name="ledger_adjustment_window_idx"),
        ),
    ]
