"""The periodic tasks the audit log and the alerts depend on, and what a change to a periodic task is.

Beat runs them from django_celery_beat's table, which operators edit in the admin. Those named here
cannot be switched off there: they stay enabled, keep their task, name and arguments, stay
recurring on an interval of at most MAX_INTERVAL_SECONDS, with no end date and no start in the
future. The check ``periodic_tasks`` (alerts.checks) raises an alert when one is missing, disabled
or has not run for its interval plus ALERT_PERIODIC_TASK_GRACE_SECONDS.
"""

from django.utils import timezone

# Periodic task name -> Celery task it runs (installed by the audit and alerts migrations).
DEPENDED_ON = {
    "Audit sequencer": "audit.sequence",
    "Audit signed tree head": "audit.sign_head",
    "Alert checks": "alerts.check",
    "Alert check: audit chain": "alerts.check",
}
MAX_INTERVAL_SECONDS = 3600
PERIOD_SECONDS = {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1, "microseconds": 1e-6}

# What the audit event of a change records of a periodic task.
FIELDS = ("name", "task", "enabled", "description", "interval", "crontab", "solar", "clocked", "start_time",
          "one_off", "args", "kwargs", "queue", "exchange", "routing_key", "priority", "headers", "expires",
          "expire_seconds")
_SCHEDULES = ("interval", "crontab", "solar", "clocked")


def interval_seconds(task) -> float | None:
    """The task's interval in seconds; None on a schedule that is not an interval."""
    if task.interval_id is None:
        return None
    return task.interval.every * PERIOD_SECONDS.get(task.interval.period, 86400)


def state(task) -> dict:
    """The fields of a periodic task, as JSON (schedules and times as text)."""
    values = {}
    for name in FIELDS:
        value = getattr(task, name)
        if name in _SCHEDULES:
            value = None if value is None else str(value)
        elif hasattr(value, "isoformat"):
            value = value.isoformat()
        values[name] = value
    return values


def refusal(before, task) -> str | None:
    """Why this change would switch off a task the audit log or the alerts depend on (None if it would
    not); ``before`` is the task as stored (None for a new one), ``task`` as it would be saved."""
    if before is None or before.name not in DEPENDED_ON:
        if task.name in DEPENDED_ON:
            return f"“{task.name}” is the name of a task the audit log or the alerts depend on."
        return None
    what = f"“{before.name}” is a task the audit log or the alerts depend on"
    if not task.enabled:
        return f"{what}: it cannot be disabled."
    if (task.name, task.task, task.args, task.kwargs) != (before.name, before.task, before.args, before.kwargs):
        return f"{what}: its name, task and arguments cannot change."
    seconds = interval_seconds(task)
    if seconds is None or seconds > MAX_INTERVAL_SECONDS or task.one_off:
        return f"{what}: it runs on an interval of at most {MAX_INTERVAL_SECONDS} seconds."
    if task.expires or (task.start_time and task.start_time > timezone.now()):
        return f"{what}: it cannot be given an end, or a start in the future."
    return None
