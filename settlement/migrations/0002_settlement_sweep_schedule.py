"""The periodic sweep that settles rounds left behind; operators edit it in the admin (Periodic tasks)."""

from django.db import migrations

from dbutils.periodic_tasks import Periodic, SchedulePeriodicTasks


class Migration(migrations.Migration):
    dependencies = [
        ("settlement", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [SchedulePeriodicTasks(Periodic(
        "Settlement sweep", "settlement.sweep", 30, "Settle every DEALT round whose settlement message was lost."))]
