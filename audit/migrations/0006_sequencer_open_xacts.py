"""The sequencer settles each transaction by its own end (audit.sequencer): the transactions still
running at its last run are kept in ``open_xacts``, so one left open (in this database or any other
of the server) no longer holds back the events of the others. The horizon keeps its value: every
event of a transaction below it is sequenced, and none is open yet. And the action of a change to a
periodic task."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0005_no_pattern_indexes'),
    ]

    operations = [
        migrations.AddField(
            model_name='auditsequencerstate',
            name='open_xacts',
            field=models.JSONField(blank=True, default=list, help_text='Transactions below the horizon still running at the last run (any database of the server).'),
        ),
        migrations.AlterField(
            model_name='auditevent',
            name='action',
            field=models.CharField(choices=[('game.created', 'Game created'), ('game.configured', 'Game configured'), ('game.status_changed', 'Game status changed'), ('rtp_policy.created', 'RTP policy created'), ('rtp_policy.changed', 'RTP policy changed'), ('seed_pair.committed', 'Seed pair committed'), ('seed_pair.revealed', 'Seed pair revealed'), ('seed_pair.retired', 'Seed pair retired (reveal pending)'), ('round.opened', 'Round opened'), ('round.dealt', 'Round dealt'), ('round.voided', 'Round voided'), ('bet.accepted', 'Bet accepted'), ('bet.refunded', 'Bet refunded'), ('rounds.settled', 'Rounds settled'), ('settlement.bets_held', 'Bets held (their settlement failed)'), ('settlement.held_bet_settled', 'Held bet settled by an operator'), ('settlement.sweep_requested', 'Settlement sweep requested'), ('account.created', 'Account created'), ('account.adjusted', 'Account adjusted'), ('staff.created', 'Staff user created'), ('staff.changed', 'Staff user changed'), ('staff.roles_changed', 'Staff roles changed'), ('auth.login_failed', 'Log-in failed'), ('approval.requested', 'Approval requested'), ('approval.applied', 'Approval applied'), ('approval.rejected', 'Approval rejected'), ('approval.expired', 'Approval expired'), ('alert.opened', 'Alert opened'), ('alert.acknowledged', 'Alert acknowledged'), ('alert.resolved', 'Alert resolved'), ('webhook.endpoint_created', 'Webhook endpoint created'), ('webhook.endpoint_changed', 'Webhook endpoint changed'), ('webhook.secret_rotated', 'Webhook secret rotated'), ('webhook.redelivered', 'Webhook redelivered'), ('auth.locked_out', 'User name locked out after failed log-ins'), ('periodic_task.changed', 'Periodic task changed')], db_index=True, max_length=64),
        ),
        migrations.AlterField(
            model_name='auditsequencerstate',
            name='horizon',
            field=models.BigIntegerField(default=0, help_text='Every event of a transaction below it, but those in open_xacts, is sequenced.'),
        ),
    ]
