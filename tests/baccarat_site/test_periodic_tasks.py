"""Every periodic task the migrations install is there after migrate, names a registered task,
and the operation installing them leaves a task an operator edited as it is; the partitions'
maintenance has a queue of its own, never the sequencer's."""

import json

import pytest
from django.apps import apps
from django_celery_beat.models import PeriodicTask

from alerts.checks import FREQUENT, HOURLY
from baccarat_site.celery import app
from dbutils.periodic_tasks import Periodic, SchedulePeriodicTasks

pytestmark = pytest.mark.django_db

EXPECTED = {
    "Settlement sweep": ("settlement.sweep", 30),
    "Audit sequencer": ("audit.sequence", 1),
    "Audit signed tree head": ("audit.sign_head", 60),
    "Approvals expiry": ("approvals.expire", 60),
    "Alert checks": ("alerts.check", 60),
    "Alert check: audit chain": ("alerts.check", 3600),
    "Webhook deliveries sweep": ("webhooks.sweep", 10),
    "Partitions of the months ahead": ("audit.partitions_ensure", 86400),
    "Archive of the months past retention": ("audit.partitions_archive", 86400),
    "Compaction of the months closed": ("audit.partitions_compact", 86400),
}


def test_migrate_installs_every_periodic_task():
    app.loader.import_default_modules()
    tasks = PeriodicTask.objects.select_related("interval")
    installed = {task.name: (task.task, task.interval.every) for task in tasks}
    assert {name: installed.get(name) for name in EXPECTED} == EXPECTED
    for task_name, _every in EXPECTED.values():
        assert task_name in app.tasks, task_name
    # The hourly task also watches that the minute's still runs (and the minute's watches it).
    assert json.loads(PeriodicTask.objects.get(name="Alert check: audit chain").kwargs) == {"names": HOURLY}
    # Every check but the audit chain's full walk runs every minute.
    assert sorted(json.loads(PeriodicTask.objects.get(name="Alert checks").kwargs)["names"]) == sorted(FREQUENT)


def test_an_edited_task_is_kept_and_the_reverse_removes_them():
    operation = SchedulePeriodicTasks(Periodic("Settlement sweep", "settlement.sweep", 5, "changed"),
                                      Periodic("Extra", "settlement.sweep", 5, "new"))
    PeriodicTask.objects.filter(name="Settlement sweep").update(description="edited by an operator")
    operation.code(apps, None)
    assert PeriodicTask.objects.get(name="Settlement sweep").description == "edited by an operator"
    assert PeriodicTask.objects.get(name="Extra").interval.every == 5
    operation.reverse_code(apps, None)
    assert not PeriodicTask.objects.filter(name__in=["Settlement sweep", "Extra"]).exists()


def test_the_partitions_maintenance_has_a_queue_of_its_own_never_the_sequencers():
    def queue_of(task_name: str) -> str:
        return app.amqp.router.route({}, task_name)["queue"].name

    assert {name: queue_of(name) for name in ("audit.sequence", "audit.sign_head", "audit.partitions_ensure",
                                              "audit.partitions_compact", "audit.partitions_archive")} == {
        "audit.sequence": "audit", "audit.sign_head": "audit", "audit.partitions_ensure": "partitions",
        "audit.partitions_compact": "partitions", "audit.partitions_archive": "partitions"}
