"""The audit trail moves here from the games app: the state only, with its content type (so granted
permissions stay); the table keeps its name, games_auditevent, and every row."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from audit.app_move import move_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("games", "0007_admin_search_indexes"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        move_content_types("games", "audit", ["auditevent"]),
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='AuditEvent',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('created_at', models.DateTimeField(db_index=True)),
                    ('actor', models.CharField(help_text='User name, or system:<worker> for the system.', max_length=150)),
                    ('action', models.CharField(choices=[('game.created', 'Game created'), ('game.configured', 'Game configured'), ('game.status_changed', 'Game status changed'), ('seed_pair.committed', 'Seed pair committed'), ('seed_pair.revealed', 'Seed pair revealed'), ('round.opened', 'Round opened'), ('round.dealt', 'Round dealt'), ('round.voided', 'Round voided'), ('bet.accepted', 'Bet accepted'), ('bet.refunded', 'Bet refunded'), ('rounds.settled', 'Rounds settled'), ('settlement.sweep_requested', 'Settlement sweep requested'), ('account.created', 'Account created'), ('account.adjusted', 'Account adjusted'), ('staff.created', 'Staff user created'), ('staff.changed', 'Staff user changed'), ('staff.roles_changed', 'Staff roles changed'), ('auth.login_failed', 'Log-in failed')], db_index=True, max_length=64)),
                    ('object_type', models.CharField(max_length=64)),
                    ('object_id', models.CharField(max_length=64)),
                    ('before', models.JSONField(blank=True, null=True)),
                    ('after', models.JSONField(blank=True, null=True)),
                    ('reason', models.TextField(blank=True)),
                    ('request_id', models.CharField(blank=True, max_length=64)),
                    ('source_ip', models.GenericIPAddressField(blank=True, null=True)),
                    ('prev_hash', models.CharField(max_length=64)),
                    ('hash', models.CharField(max_length=64, unique=True)),
                    ('actor_user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='audit_events', to=settings.AUTH_USER_MODEL)),
                ],
                options={
                    'db_table': 'games_auditevent',
                    'ordering': ['-id'],
                    'indexes': [models.Index(fields=['object_type', 'object_id'], name='audit_object_idx'), models.Index(fields=['object_id'], name='audit_object_id_idx'), models.Index(fields=['request_id'], name='audit_request_id_idx'), models.Index(fields=['actor'], name='audit_actor_idx', opclasses=['varchar_pattern_ops'])],
                    'constraints': [models.UniqueConstraint(fields=('prev_hash',), name='audit_chain_has_no_forks'), models.CheckConstraint(condition=models.Q(('hash__regex', '^[0-9a-f]{64}$')), name='audit_hash_hex')],
                },
            ),
        ]),
    ]
