"""The periodic task that marks pending requests past their expiry as expired (editable in the admin)."""

from django.db import migrations

from dbutils.periodic_tasks import Periodic, SchedulePeriodicTasks


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [SchedulePeriodicTasks(Periodic(
        "Approvals expiry", "approvals.expire", 60,
        "Mark pending four-eyes requests past their expiry as expired."))]
