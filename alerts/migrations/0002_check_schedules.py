"""The periodic alert checks (editable in the admin): the quick ones every minute, the audit chain's
full walk every hour."""

from django.db import migrations

from dbutils.periodic_tasks import Periodic, SchedulePeriodicTasks


class Migration(migrations.Migration):
    dependencies = [
        ("alerts", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [SchedulePeriodicTasks(*(
        Periodic(name, "alerts.check", seconds, f"Checks: {', '.join(checks)}.", {"names": checks})
        for name, (seconds, checks) in {
            "Alert checks": (60, ["settlement_lag", "rounds_for_operators", "outcome_tests", "rtp_bands",
                                  "large_payouts"]),
            "Alert check: audit chain": (3600, ["audit_chain"]),
        }.items()))]
