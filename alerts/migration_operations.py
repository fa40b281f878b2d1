"""Migration operations of the alerts app: adding a check to the beat tasks that run the checks."""

import json

from django.db import migrations


def schedule_checks(added: dict) -> migrations.RunPython:
    """Add each check to its periodic task ({task name: (check, ...)}); backwards, take them out.
    A task an operator deleted stays deleted, and their other edits of its checks are kept."""

    def edit(apps, change):
        for name, checks in added.items():
            task = apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=name).first()
            if task is None:
                continue
            kwargs = json.loads(task.kwargs or "{}")
            names = change(list(kwargs.get("names", [])), checks)
            if names != kwargs.get("names", []):
                kwargs["names"] = names
                task.kwargs = json.dumps(kwargs)
                task.save(update_fields=["kwargs"])

    def forwards(apps, schema_editor):
        edit(apps, lambda names, checks: names + [check for check in checks if check not in names])

    def backwards(apps, schema_editor):
        edit(apps, lambda names, checks: [name for name in names if name not in checks])

    return migrations.RunPython(forwards, backwards)
