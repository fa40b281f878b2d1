from django.db import migrations, models


def chain_existing_events(apps, schema_editor):
    from audit.chain import GENESIS_HASH, HASHED_FIELDS, event_hash

    AuditEvent = apps.get_model("games", "AuditEvent")
    prev_hash = GENESIS_HASH
    for event in AuditEvent.objects.order_by("id").iterator():
        values = {name: getattr(event, name) for name in HASHED_FIELDS}
        event.prev_hash = prev_hash
        event.hash = prev_hash = event_hash(prev_hash, values)
        event.save(update_fields=["prev_hash", "hash"])


class Migration(migrations.Migration):
    dependencies = [("games", "0004_round_settlement_failures")]

    operations = [
        migrations.AlterField(
            model_name="auditevent", name="created_at", field=models.DateTimeField(db_index=True),
        ),
        migrations.AddField(
            model_name="auditevent", name="prev_hash", field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="auditevent", name="hash", field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.RunPython(chain_existing_events, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="auditevent", name="hash", field=models.CharField(max_length=64, unique=True),
        ),
        migrations.AddConstraint(
            model_name="auditevent",
            constraint=models.UniqueConstraint(fields=("prev_hash",), name="audit_chain_has_no_forks"),
        ),
        migrations.AddConstraint(
            model_name="auditevent",
            constraint=models.CheckConstraint(condition=models.Q(hash__regex="^[0-9a-f]{64}$"), name="audit_hash_hex"),
        ),
    ]
