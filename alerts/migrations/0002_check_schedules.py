"""The periodic alert checks (editable in the admin): the quick ones every minute, the audit chain's
full walk every hour."""

import json

from django.db import migrations

SCHEDULES = {
    "Alert checks": (60, ["settlement_lag", "rounds_for_operators", "outcome_tests", "rtp_bands", "large_payouts"]),
    "Alert check: audit chain": (3600, ["audit_chain"]),
}


def create_schedules(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, (seconds, checks) in SCHEDULES.items():
        interval, _ = IntervalSchedule.objects.get_or_create(every=seconds, period="seconds")
        PeriodicTask.objects.get_or_create(
            name=name, defaults={"task": "alerts.check", "interval": interval,
                                 "kwargs": json.dumps({"names": checks}), "description": f"Checks: {', '.join(checks)}."})


def remove_schedules(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name__in=list(SCHEDULES)).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("alerts", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedules, remove_schedules)]
