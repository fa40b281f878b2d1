"""The migration operation that installs Celery beat's periodic tasks (editable in the admin)."""

import json
from dataclasses import dataclass, field

from django.db import migrations


@dataclass(frozen=True)
class Periodic:
    name: str
    task: str
    every_seconds: int
    description: str
    kwargs: dict = field(default_factory=dict)


class SchedulePeriodicTasks(migrations.RunPython):
    """Create these periodic tasks unless a task of that name exists (an operator may have edited
    it); reversed, remove them."""

    def __init__(self, *periodic: Periodic):
        self.periodic = periodic
        super().__init__(self._create, self._remove)

    def deconstruct(self):
        return self.__class__.__qualname__, list(self.periodic), {}

    def _create(self, apps, schema_editor):
        IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
        PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
        for entry in self.periodic:
            interval, _ = IntervalSchedule.objects.get_or_create(every=entry.every_seconds, period="seconds")
            defaults = {"task": entry.task, "interval": interval, "description": entry.description}
            if entry.kwargs:
                defaults["kwargs"] = json.dumps(entry.kwargs)
            PeriodicTask.objects.get_or_create(name=entry.name, defaults=defaults)

    def _remove(self, apps, schema_editor):
        names = [entry.name for entry in self.periodic]
        apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name__in=names).delete()
