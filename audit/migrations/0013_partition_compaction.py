"""The action of a closed month's compaction, and the daily task that compacts the months closed."""

from django.db import migrations, models

from dbutils.periodic_tasks import Periodic, SchedulePeriodicTasks


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0012_leaf_hash_index'),
        ('django_celery_beat', '0019_alter_periodictasks_options'),
    ]

    operations = [
        migrations.AlterField(
            model_name='auditevent',
            name='action',
            field=models.CharField(choices=[('game.created', 'Game created'), ('game.configured', 'Game configured'), ('game.status_changed', 'Game status changed'), ('rtp_policy.created', 'RTP policy created'), ('rtp_policy.changed', 'RTP policy changed'), ('seed_pair.committed', 'Seed pair committed'), ('seed_pair.revealed', 'Seed pair revealed'), ('seed_pair.retired', 'Seed pair retired (reveal pending)'), ('round.opened', 'Round opened'), ('round.dealt', 'Round dealt'), ('round.voided', 'Round voided'), ('bet.accepted', 'Bet accepted'), ('bet.refunded', 'Bet refunded'), ('rounds.settled', 'Rounds settled'), ('settlement.bets_held', 'Bets held (their settlement failed)'), ('settlement.held_bet_settled', 'Held bet settled by an operator'), ('settlement.sweep_requested', 'Settlement sweep requested'), ('account.created', 'Account created'), ('account.adjusted', 'Account adjusted'), ('staff.created', 'Staff user created'), ('staff.changed', 'Staff user changed'), ('staff.roles_changed', 'Staff roles changed'), ('auth.login_failed', 'Log-in failed'), ('approval.requested', 'Approval requested'), ('approval.applied', 'Approval applied'), ('approval.rejected', 'Approval rejected'), ('approval.expired', 'Approval expired'), ('alert.opened', 'Alert opened'), ('alert.acknowledged', 'Alert acknowledged'), ('alert.resolved', 'Alert resolved'), ('incident.opened', 'Incident opened'), ('incident.restored', 'Incident: service restored'), ('webhook.endpoint_created', 'Webhook endpoint created'), ('webhook.endpoint_changed', 'Webhook endpoint changed'), ('webhook.secret_rotated', 'Webhook secret rotated'), ('webhook.redelivered', 'Webhook redelivered'), ('auth.locked_out', 'User name locked out after failed log-ins'), ('periodic_task.changed', 'Periodic task changed'), ('partitions.archived', 'Months archived (their manifests)'), ('partitions.restored', 'Archived months restored'), ('partitions.compacted', "A closed month's indexes built again, packed"), ('auth.logged_in', 'Logged in'), ('auth.token_refused', 'API token refused'), ('auth.token_created', 'API token made'), ('auth.token_deleted', 'API token deleted'), ('auth.token_rotated', 'API token rotated'), ('auth.token_revoked', 'API token revoked'), ('auth.second_factor', 'Second factor entered at log-in'), ('auth.step_up', 'Second factor entered again (step-up)'), ('auth.second_factor_enrolled', 'Second factor enrolled'), ('auth.second_factor_reset', 'Second factor reset by an administrator')], db_index=True, max_length=64),
        ),
        SchedulePeriodicTasks(Periodic(
            "Compaction of the months closed", "audit.partitions_compact", 86400,
            "Build again, packed, the indexes of every month of the partitioned tables ended "
            "PARTITIONS_COMPACT_AFTER_DAYS ago or more and not yet compacted (writers go on).")),
    ]
