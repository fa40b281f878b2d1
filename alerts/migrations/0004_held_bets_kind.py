"""The held-bets alert kind; the minute's checks run it, and the audit-pending check, which no
schedule ran before."""

from django.conf import settings
import json

from django.db import migrations, models

CHECKS = ("held_bets", "audit_pending")


def schedule_check(apps, schema_editor):
    """The minute's checks run these too (an operator's other edits of the schedule are kept)."""
    task = apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name="Alert checks").first()
    if task is None:
        return
    kwargs = json.loads(task.kwargs or "{}")
    missing = [check for check in CHECKS if check not in kwargs.get("names", CHECKS)]
    if missing:
        kwargs["names"].extend(missing)
        task.kwargs = json.dumps(kwargs)
        task.save(update_fields=["kwargs"])


def unschedule_check(apps, schema_editor):
    task = apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name="Alert checks").first()
    if task is None:
        return
    kwargs = json.loads(task.kwargs or "{}")
    kept = [name for name in kwargs.get("names", []) if name not in CHECKS]
    if kept != kwargs.get("names", []):
        kwargs["names"] = kept
        task.kwargs = json.dumps(kwargs)
        task.save(update_fields=["kwargs"])


class Migration(migrations.Migration):

    dependencies = [
        ('alerts', '0003_audit_pending_kind'),
        ('django_celery_beat', '0019_alter_periodictasks_options'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='alert',
            name='alert_kind_valid',
        ),
        migrations.AlterField(
            model_name='alert',
            name='kind',
            field=models.CharField(choices=[('settlement_lag', 'Settlement lag'), ('rounds_for_operators', 'Rounds left for operators'), ('held_bets', 'Bets held for operators'), ('audit_chain', 'Audit log verification failed'), ('audit_pending', 'Audit events waiting for the sequencer'), ('outcome_test', "A day's outcomes off the published odds"), ('rtp_band', 'Actual RTP outside its plausible band'), ('large_payout', 'Large single payout')], max_length=32),
        ),
        migrations.AddConstraint(
            model_name='alert',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['settlement_lag', 'rounds_for_operators', 'held_bets', 'audit_chain', 'audit_pending', 'outcome_test', 'rtp_band', 'large_payout'])), name='alert_kind_valid'),
        ),
        migrations.RunPython(schedule_check, unschedule_check),
    ]
