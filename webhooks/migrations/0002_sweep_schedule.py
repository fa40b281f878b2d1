"""The periodic sweep that hands due webhook deliveries (retries, lost messages) to the workers."""

from django.db import migrations

from dbutils.periodic_tasks import Periodic, SchedulePeriodicTasks


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [SchedulePeriodicTasks(Periodic(
        "Webhook deliveries sweep", "webhooks.sweep", 10,
        "Send every webhook delivery that is due (retries after their backoff, and any whose message or worker "
        "was lost)."))]
