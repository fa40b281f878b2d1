"""The ledger's one money effect per bet and kind moves to a table of its own, wallet_ledgereffect,
whose primary key (bet_id, kind) replaces the ledger's unique (bet_id, kind): the ledger can then be
partitioned by month (a partitioned table's unique indexes must hold its partition key). Filled from
every entry of a bet, then its primary key built once (faster than row by row); append-only like the
ledger. The ledger keeps an index on (bet_id, kind), not unique, for the lookups of a bet's entries;
it is built before the unique one goes, so that they always have one."""

from django.db import migrations, models

from audit.append_only import append_only

FILL = """
    ALTER TABLE wallet_ledgereffect DROP CONSTRAINT wallet_ledgereffect_pkey;
    INSERT INTO wallet_ledgereffect (bet_id, kind)
        SELECT bet_id, kind FROM settlement_ledgerentry WHERE bet_id IS NOT NULL;
    ALTER TABLE wallet_ledgereffect ADD CONSTRAINT wallet_ledgereffect_pkey PRIMARY KEY (bet_id, kind);
"""


class Migration(migrations.Migration):

    dependencies = [
        ("wallet", "0005_ledger_adjustment_window_index"),
    ]

    operations = [
        migrations.CreateModel(
            name="LedgerEffect",
            fields=[
                ("pk", models.CompositePrimaryKey("bet_id", "kind", blank=True, editable=False, primary_key=True,
                                                  serialize=False)),
                ("bet_id", models.BigIntegerField()),
                ("kind", models.CharField(choices=[("STAKE", "Stake (debit)"), ("PAYOUT", "Payout (credit)"),
                                                   ("REFUND", "Refund (credit)"), ("ADJUSTMENT", "Adjustment")],
                                          max_length=10)),
            ],
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
        append_only("wallet_ledgereffect"),
        migrations.AddIndex(
            model_name="ledgerentry",
            index=models.Index(fields=["bet_id", "kind"], name="ledger_bet_kind_idx"),
        ),
        migrations.RemoveConstraint(model_name="ledgerentry", name="ledger_one_effect_per_bet_and_kind"),
    ]
