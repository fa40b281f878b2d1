"""The periodic sweep that hands due webhook deliveries (retries, lost messages) to the workers."""

from django.db import migrations

SWEEP_NAME = "Webhook deliveries sweep"


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_10_seconds, _ = IntervalSchedule.objects.get_or_create(every=10, period="seconds")
    PeriodicTask.objects.get_or_create(
        name=SWEEP_NAME, defaults={"task": "webhooks.sweep", "interval": every_10_seconds,
                                   "description": "Send every webhook delivery that is due (retries after their "
                                                  "backoff, and any whose message or worker was lost)."})


def remove_schedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=SWEEP_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, remove_schedule)]
