"""The ledger is append-only in the database itself."""

from django.db import migrations

from audit.append_only import append_only


class Migration(migrations.Migration):
    dependencies = [("settlement", "0002_settlement_sweep_schedule")]

    operations = [append_only("settlement_ledgerentry")]
