"""The periodic sweep that settles rounds left behind; operators edit it in the admin (Periodic tasks)."""

from django.db import migrations

SWEEP_NAME = "Settlement sweep"


def create_sweep_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_30_seconds, _ = IntervalSchedule.objects.get_or_create(every=30, period="seconds")
    PeriodicTask.objects.get_or_create(
        name=SWEEP_NAME,
        defaults={"task": "settlement.sweep", "interval": every_30_seconds,
                  "description": "Settle every DEALT round whose settlement message was lost."},
    )


def remove_sweep_schedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=SWEEP_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("settlement", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_sweep_schedule, remove_sweep_schedule)]
