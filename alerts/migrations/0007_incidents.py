"""Incidents (opened by a critical alert, restored when its alerts are resolved), the alert's
incident, and the readiness alert kind, which the minute's checks run (an operator's other edits of
the schedule are kept)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from alerts.migration_operations import schedule_checks


CHECK = "readiness"


class Migration(migrations.Migration):

    dependencies = [
        ('alerts', '0006_replica_kind'),
        ('django_celery_beat', '0019_alter_periodictasks_options'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Incident',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('opened_at', models.DateTimeField()),
                ('cause', models.TextField(help_text="The first alert's kind and message.")),
                ('status', models.CharField(choices=[('open', 'Open'), ('restored', 'Service restored')], default='open', max_length=16)),
                ('restored_at', models.DateTimeField(blank=True, null=True)),
                ('restored_by_actor', models.CharField(blank=True, help_text='User name, or system:alerts.', max_length=150)),
            ],
            options={
                'ordering': ['-opened_at', '-id'],
            },
        ),
        migrations.RemoveConstraint(
            model_name='alert',
            name='alert_kind_valid',
        ),
        migrations.AlterField(
            model_name='alert',
            name='kind',
            field=models.CharField(choices=[('settlement_lag', 'Settlement lag'), ('rounds_for_operators', 'Rounds left for operators'), ('held_bets', 'Bets held for operators'), ('audit_chain', 'Audit log verification failed'), ('audit_pending', 'Audit events waiting for the sequencer'), ('audit_heads', 'Audit heads that do not verify'), ('periodic_tasks', 'Periodic tasks of the audit log or alerts not running'), ('readiness', 'Readiness failing'), ('outcome_test', "A day's outcomes off the published odds"), ('rtp_band', 'Actual RTP outside its plausible band'), ('large_payout', 'Large single payout'), ('replica', 'Read replica not answering or behind')], max_length=32),
        ),
        migrations.AddField(
            model_name='incident',
            name='restored_by',
            field=models.ForeignKey(blank=True, help_text='Empty when the system saw the conditions clear.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='alert',
            name='incident',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='alerts', to='alerts.incident'),
        ),
        migrations.AddConstraint(
            model_name='alert',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['settlement_lag', 'rounds_for_operators', 'held_bets', 'audit_chain', 'audit_pending', 'audit_heads', 'periodic_tasks', 'readiness', 'outcome_test', 'rtp_band', 'large_payout', 'replica'])), name='alert_kind_valid'),
        ),
        migrations.AddConstraint(
            model_name='incident',
            constraint=models.CheckConstraint(condition=models.Q(('status__in', ['open', 'restored'])), name='incident_status_valid'),
        ),
        migrations.AddConstraint(
            model_name='incident',
            constraint=models.UniqueConstraint(condition=models.Q(('status', 'open')), fields=('status',), name='incident_one_open'),
        ),
        migrations.AddConstraint(
            model_name='incident',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('restored_at__isnull', True), ('status', 'open')), models.Q(('restored_at__gte', models.F('opened_at')), ('status', 'restored')), _connector='OR'), name='incident_restored_has_time'),
        ),
        schedule_checks({"Alert checks": (CHECK,)}),
    ]
