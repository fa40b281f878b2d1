"""The read-replica alert kind (a replica that does not answer, is no standby or is too far behind);
the minute's checks run it. An operator's other edits of the schedule are kept."""

from django.db import migrations, models

from alerts.migration_operations import schedule_checks

CHECK = "replicas"
KINDS = [
    ('settlement_lag', 'Settlement lag'), ('rounds_for_operators', 'Rounds left for operators'),
    ('held_bets', 'Bets held for operators'), ('audit_chain', 'Audit log verification failed'),
    ('audit_pending', 'Audit events waiting for the sequencer'), ('audit_heads', 'Audit heads that do not verify'),
    ('periodic_tasks', 'Periodic tasks of the audit log or alerts not running'),
    ('outcome_test', "A day's outcomes off the published odds"), ('rtp_band', 'Actual RTP outside its plausible band'),
    ('large_payout', 'Large single payout'), ('replica', 'Read replica not answering or behind'),
]


class Migration(migrations.Migration):

    dependencies = [
        ('alerts', '0005_audit_heads_periodic_tasks'),
        ('django_celery_beat', '0019_alter_periodictasks_options'),
    ]

    operations = [
        migrations.RemoveConstraint(model_name='alert', name='alert_kind_valid'),
        migrations.AlterField(model_name='alert', name='kind', field=models.CharField(choices=KINDS, max_length=32)),
        migrations.AddConstraint(
            model_name='alert',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', [kind for kind, _label in KINDS])),
                                              name='alert_kind_valid'),
        ),
        schedule_checks({"Alert checks": (CHECK,)}),
    ]
