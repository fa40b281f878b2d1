"""Two alert kinds: stored audit heads that do not verify, and periodic tasks of the audit log or
the alerts that stopped running; the minute's checks run both, the hourly one the second too (each
alert task watches the other). An operator's other edits of the schedules are kept."""

from django.conf import settings
from django.db import migrations, models

from alerts.migration_operations import schedule_checks

ADDED = {"Alert checks": ("audit_heads", "periodic_tasks"), "Alert check: audit chain": ("periodic_tasks",)}


class Migration(migrations.Migration):

    dependencies = [
        ('alerts', '0004_held_bets_kind'),
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
            field=models.CharField(choices=[('settlement_lag', 'Settlement lag'), ('rounds_for_operators', 'Rounds left for operators'), ('held_bets', 'Bets held for operators'), ('audit_chain', 'Audit log verification failed'), ('audit_pending', 'Audit events waiting for the sequencer'), ('audit_heads', 'Audit heads that do not verify'), ('periodic_tasks', 'Periodic tasks of the audit log or alerts not running'), ('outcome_test', "A day's outcomes off the published odds"), ('rtp_band', 'Actual RTP outside its plausible band'), ('large_payout', 'Large single payout')], max_length=32),
        ),
        migrations.AddConstraint(
            model_name='alert',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['settlement_lag', 'rounds_for_operators', 'held_bets', 'audit_chain', 'audit_pending', 'audit_heads', 'periodic_tasks', 'outcome_test', 'rtp_band', 'large_payout'])), name='alert_kind_valid'),
        ),
        schedule_checks(ADDED),
    ]
