"""The Merkle log: leaves, perfect nodes, signed heads and the sequencer's state. Every existing
event keeps its row, its content and its hash chain, and becomes a leaf in id order (the order its
chain proves); later events carry the id of the transaction that wrote them instead of a chain link.
The new tables are append-only like the events; the sequencer and the head run on Celery beat."""

import audit.models
import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from audit.append_only import append_only
from audit.chain import HASHED_FIELDS, leaf_entry
from audit.merkle import leaf_hash, new_perfect_nodes
from dbutils.periodic_tasks import Periodic, SchedulePeriodicTasks

CHUNK = 5000
SEQUENCER_TASK = "Audit sequencer"
HEAD_TASK = "Audit signed tree head"


def sequence_existing_events(apps, schema_editor):
    AuditEvent = apps.get_model("audit", "AuditEvent")
    AuditLeaf = apps.get_model("audit", "AuditLeaf")
    AuditNode = apps.get_model("audit", "AuditNode")

    def stored(level, index):
        if level == 0:
            return bytes.fromhex(AuditLeaf.objects.get(index=index).hash)
        return bytes.fromhex(AuditNode.objects.get(level=level, index=index).hash)

    size = 0
    rows = AuditEvent.objects.order_by("id").values("id", *HASHED_FIELDS)
    batch = []
    for row in [*rows.iterator(chunk_size=CHUNK), None]:
        if row is not None:
            batch.append(row)
        if batch and (row is None or len(batch) == CHUNK):
            hashes = [leaf_hash(leaf_entry(r)) for r in batch]
            AuditLeaf.objects.bulk_create(AuditLeaf(index=size + i, event_id=r["id"], hash=h.hex())
                                          for i, (r, h) in enumerate(zip(batch, hashes, strict=True)))
            made = new_perfect_nodes(size, hashes, stored)
            AuditNode.objects.bulk_create(AuditNode(level=level, index=index, hash=h.hex())
                                          for (level, index), h in made.items())
            size += len(batch)
            batch = []
    apps.get_model("audit", "AuditSequencerState").objects.create(pk=1, tree_size=size, horizon=0)


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0001_initial'),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='AuditHead',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('tree_size', models.BigIntegerField(unique=True, validators=[django.core.validators.MinValueValidator(0)])),
                ('root_hash', models.CharField(max_length=64, validators=[django.core.validators.RegexValidator('^[0-9a-f]{64}$', 'A SHA-256 hash as 64 lower-case hex digits.')])),
                ('timestamp', models.BigIntegerField(help_text='Milliseconds since 1970-01-01 UTC.')),
                ('signature', models.CharField(help_text='Ed25519 signature, base64.', max_length=88)),
                ('key_id', models.CharField(help_text='SHA-256 of the raw Ed25519 public key, hex.', max_length=64, validators=[django.core.validators.RegexValidator('^[0-9a-f]{64}$', 'A SHA-256 hash as 64 lower-case hex digits.')])),
            ],
            options={
                'ordering': ['-tree_size'],
            },
        ),
        migrations.CreateModel(
            name='AuditLeaf',
            fields=[
                ('index', models.BigIntegerField(primary_key=True, serialize=False, validators=[django.core.validators.MinValueValidator(0)])),
                ('hash', models.CharField(max_length=64, validators=[django.core.validators.RegexValidator('^[0-9a-f]{64}$', 'A SHA-256 hash as 64 lower-case hex digits.')])),
            ],
            options={
                'ordering': ['index'],
            },
        ),
        migrations.CreateModel(
            name='AuditNode',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('level', models.PositiveSmallIntegerField(validators=[django.core.validators.MinValueValidator(1)])),
                ('index', models.BigIntegerField(validators=[django.core.validators.MinValueValidator(0)])),
                ('hash', models.CharField(max_length=64, validators=[django.core.validators.RegexValidator('^[0-9a-f]{64}$', 'A SHA-256 hash as 64 lower-case hex digits.')])),
            ],
        ),
        migrations.CreateModel(
            name='AuditSequencerState',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('tree_size', models.BigIntegerField(default=0)),
                ('horizon', models.BigIntegerField(default=0, help_text='Every event of a transaction below it is sequenced.')),
            ],
        ),
        migrations.AddField(
            model_name='auditevent',
            name='xact_id',
            field=models.BigIntegerField(db_default=audit.models.CurrentTransactionId(), editable=False, help_text='The inserting transaction (PostgreSQL), for the sequencer.', null=True),
        ),
        migrations.AlterField(
            model_name='auditevent',
            name='hash',
            field=models.CharField(blank=True, editable=False, help_text='Hash chain of events written before the Merkle log.', max_length=64, null=True, unique=True),
        ),
        migrations.AlterField(
            model_name='auditevent',
            name='prev_hash',
            field=models.CharField(blank=True, editable=False, help_text='Hash chain of events written before the Merkle log.', max_length=64, null=True),
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['xact_id'], name='audit_xact_id_idx'),
        ),
        migrations.AddConstraint(
            model_name='audithead',
            constraint=models.CheckConstraint(condition=models.Q(('tree_size__gte', 0)), name='audit_head_size_not_negative'),
        ),
        migrations.AddConstraint(
            model_name='audithead',
            constraint=models.CheckConstraint(condition=models.Q(('root_hash__regex', '^[0-9a-f]{64}$')), name='audit_head_root_hex'),
        ),
        migrations.AddField(
            model_name='auditleaf',
            name='event',
            field=models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='leaf', to='audit.auditevent'),
        ),
        migrations.AddConstraint(
            model_name='auditnode',
            constraint=models.UniqueConstraint(fields=('level', 'index'), name='audit_node_position'),
        ),
        migrations.AddConstraint(
            model_name='auditnode',
            constraint=models.CheckConstraint(condition=models.Q(('index__gte', 0), ('level__gte', 1)), name='audit_node_position_valid'),
        ),
        migrations.AddConstraint(
            model_name='auditnode',
            constraint=models.CheckConstraint(condition=models.Q(('hash__regex', '^[0-9a-f]{64}$')), name='audit_node_hash_hex'),
        ),
        migrations.AddConstraint(
            model_name='auditleaf',
            constraint=models.CheckConstraint(condition=models.Q(('index__gte', 0)), name='audit_leaf_index_not_negative'),
        ),
        migrations.AddConstraint(
            model_name='auditleaf',
            constraint=models.CheckConstraint(condition=models.Q(('hash__regex', '^[0-9a-f]{64}$')), name='audit_leaf_hash_hex'),
        ),
        migrations.RunPython(sequence_existing_events, migrations.RunPython.noop),
        append_only("games_auditevent"),
        append_only("audit_auditleaf"),
        append_only("audit_auditnode"),
        append_only("audit_audithead"),
        SchedulePeriodicTasks(
            Periodic(SEQUENCER_TASK, "audit.sequence", 1, "Give committed audit events their leaves in the Merkle log."),
            Periodic(HEAD_TASK, "audit.sign_head", 60,
                     "Sign a tree head of the audit log when it has grown, and publish it."),
        ),
    ]
