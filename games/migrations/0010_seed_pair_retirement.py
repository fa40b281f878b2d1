"""Seed pairs retire before they are revealed: a rotation retires the active pair at once (the new
pair takes the next rounds) and reveals it when its last open round is dealt or voided. Every pair
revealed so far retired at its reveal."""


from django.db import migrations, models
from django.db.models import F


def retired_when_revealed(apps, schema_editor):
    SeedPair = apps.get_model("games", "SeedPair")
    SeedPair.objects.filter(revealed_at__isnull=False).update(retired_at=F("revealed_at"))



class Migration(migrations.Migration):

    dependencies = [
        ('games', '0009_money_range_and_idempotency_keys'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='seedpair',
            name='one_active_seed_pair_per_game',
        ),
        migrations.AddField(
            model_name='seedpair',
            name='retired_at',
            field=models.DateTimeField(blank=True, help_text='When a newer pair took over; it opens no round from then on and is revealed once its last open round is dealt or voided.', null=True),
        ),
        migrations.RunPython(retired_when_revealed, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='seedpair',
            constraint=models.UniqueConstraint(condition=models.Q(('retired_at__isnull', True)), fields=('game',), name='one_active_seed_pair_per_game'),
        ),
        migrations.AddConstraint(
            model_name='seedpair',
            constraint=models.CheckConstraint(condition=models.Q(('revealed_at__isnull', True), models.Q(('retired_at__isnull', False), ('revealed_at__gte', models.F('retired_at'))), _connector='OR'), name='seed_pair_revealed_after_retired'),
        ),
    ]
