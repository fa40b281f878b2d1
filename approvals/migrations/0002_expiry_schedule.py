"""The periodic task that marks pending requests past their expiry as expired (editable in the admin)."""

from django.db import migrations

EXPIRY_NAME = "Approvals expiry"


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_minute, _ = IntervalSchedule.objects.get_or_create(every=60, period="seconds")
    PeriodicTask.objects.get_or_create(
        name=EXPIRY_NAME,
        defaults={"task": "approvals.expire", "interval": every_minute,
                  "description": "Mark pending four-eyes requests past their expiry as expired."},
    )


def remove_schedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=EXPIRY_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, remove_schedule)]
