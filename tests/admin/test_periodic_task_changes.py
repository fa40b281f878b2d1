"""Periodic tasks in the admin: every change carries a reason into the audit trail, the tasks the audit
log and the alerts depend on cannot be switched off there, and a check raises an alert when one stops
running."""

from datetime import timedelta

import pytest
from django.forms import MultiWidget
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from alerts import checks, services
from alerts.models import Alert
from audit.models import AuditEvent

pytestmark = pytest.mark.django_db
CHANGED = "periodic_task.changed"
# The tasks the audit log and the alerts depend on (alerts.schedules).
DEPENDED_ON = ["Alert check: audit chain", "Alert checks", "Audit sequencer", "Audit signed tree head"]


def change_url(task) -> str:
    return reverse("admin:django_celery_beat_periodictask_change", args=[task.pk])


def form_data(client, periodic, /, **overrides) -> dict:
    """The change form's fields as the page shows them, with ``overrides`` (False unticks a box)."""
    form = client.get(change_url(periodic)).context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form[name].value()
        if isinstance(field.widget, MultiWidget):
            for index, part in enumerate(field.widget.decompress(value)):
                data[f"{name}_{index}"] = "" if part is None else str(part)
        elif isinstance(value, bool):
            if value:
                data[name] = "on"
        else:
            data[name] = "" if value is None else value
    for name, value in overrides.items():
        if value is False:
            data.pop(name, None)
        else:
            data[name] = value
    return data


@pytest.mark.parametrize("name", DEPENDED_ON)
def test_a_task_the_audit_log_or_alerts_depend_on_cannot_be_disabled_in_the_admin(as_admin, name):
    """Before, an administrator (or an operator) unticked "enabled" and nothing recorded it."""
    task = PeriodicTask.objects.get(name=name)
    response = as_admin.post(change_url(task), form_data(as_admin, task, enabled=False, reason="too noisy"))
    assert response.status_code == 200  # the form again, with the refusal
    assert "cannot be disabled" in response.content.decode()
    assert PeriodicTask.objects.get(pk=task.pk).enabled
    for overrides in ({"one_off": "on"}, {"kwargs": '{"names": []}'} if task.task == "alerts.check" else
                      {"task": "settlement.sweep", "regtask": ""}):
        response = as_admin.post(change_url(task), form_data(as_admin, task, reason="why not", **overrides))
        assert response.status_code == 200 and "depend on" in response.content.decode()
    assert not AuditEvent.objects.filter(action=CHANGED).exists()


def test_the_bulk_actions_that_switch_tasks_off_are_gone_and_nothing_is_deleted(as_admin):
    task = PeriodicTask.objects.get(name="Audit sequencer")
    changelist = reverse("admin:django_celery_beat_periodictask_changelist")
    for action in ("disable_tasks", "toggle_tasks", "delete_selected"):
        as_admin.post(changelist, {"action": action, "_selected_action": [task.pk], "post": "yes"})
        assert PeriodicTask.objects.get(pk=task.pk).enabled
    assert as_admin.post(reverse("admin:django_celery_beat_periodictask_delete", args=[task.pk]),
                         {"post": "yes"}).status_code == 403
    assert PeriodicTask.objects.filter(pk=task.pk).exists()


def test_a_change_to_a_periodic_task_is_audited_with_its_reason(as_operator, operator):
    task = PeriodicTask.objects.get(name="Settlement sweep")
    slower, _ = IntervalSchedule.objects.get_or_create(every=60, period="seconds")
    response = as_operator.post(change_url(task), form_data(as_operator, task, interval=str(slower.pk), reason=""))
    assert response.status_code == 200 and PeriodicTask.objects.get(pk=task.pk).interval_id == task.interval_id
    response = as_operator.post(change_url(task), form_data(as_operator, task, interval=str(slower.pk),
                                                            enabled=False, reason="maintenance window"))
    assert response.status_code == 302, response.content.decode()[:2000]
    changed = PeriodicTask.objects.get(pk=task.pk)
    assert changed.interval_id == slower.pk and not changed.enabled  # any other task may be disabled
    event = AuditEvent.objects.get(action=CHANGED)
    assert (event.actor_user_id, event.object_type, event.object_id, event.reason) == (
        operator.pk, "periodictask", str(task.pk), "maintenance window")
    assert (event.before["enabled"], event.after["enabled"]) == (True, False)
    assert event.before["interval"] != event.after["interval"]
    # A task the audit log depends on still takes a change that keeps it running, with its reason.
    sequencer = PeriodicTask.objects.get(name="Audit sequencer")
    response = as_operator.post(change_url(sequencer), form_data(as_operator, sequencer, description="every second",
                                                                 reason="clearer description"))
    assert response.status_code == 302
    assert AuditEvent.objects.filter(action=CHANGED, object_id=str(sequencer.pk)).count() == 1


def test_the_service_refuses_too(operator):
    task = PeriodicTask.objects.get(name="Alert checks")
    task.enabled = False
    with pytest.raises(Exception, match="cannot be disabled"):
        services.periodic_task_save(task=task, actor=operator, reason="quiet please")
    assert PeriodicTask.objects.get(pk=task.pk).enabled


def test_a_task_that_stops_running_raises_an_alert(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # beat runs the schedules (a broker is configured)
    now = timezone.now()
    PeriodicTask.objects.filter(name__in=DEPENDED_ON).update(last_run_at=now)
    assert checks.periodic_tasks() == []
    PeriodicTask.objects.filter(name="Audit signed tree head").update(last_run_at=now - timedelta(hours=1))
    PeriodicTask.objects.filter(name="Alert checks").update(enabled=False)  # behind the admin's back
    [finding] = checks.periodic_tasks()
    assert finding.kind == "periodic_tasks" and finding.recurring
    assert "“Audit signed tree head” last ran" in finding.message and "“Alert checks” is disabled" in finding.message
    assert services.alerts_check(["periodic_tasks"]) == {"periodic_tasks": (1, 1)}
    assert Alert.objects.get(kind="periodic_tasks").severity == "critical"
    daily, _ = IntervalSchedule.objects.get_or_create(every=1, period="days")
    PeriodicTask.objects.filter(name="Audit sequencer").update(interval=daily)  # its schedule slowed down
    assert "“Audit sequencer” runs only every 86400 s" in checks.periodic_tasks()[0].message
    PeriodicTask.objects.filter(name="Audit sequencer").delete()
    assert "“Audit sequencer” (audit.sequence) is missing" in checks.periodic_tasks()[0].message
    settings.CELERY_TASK_ALWAYS_EAGER = True  # no broker, no beat: nothing is expected to run
    assert checks.periodic_tasks() == []
