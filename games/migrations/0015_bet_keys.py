"""A bet's idempotency key moves to a table of its own, games_betkey, whose primary key (client, key)
replaces the bets' unique (client, key): the bets can then be partitioned by month (a partitioned
table's unique indexes must hold its partition key). Filled from every bet there is, then its
primary key built once (faster than key by key); append-only like the ledger."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from audit.append_only import append_only

FILL = """
    ALTER TABLE games_betkey DROP CONSTRAINT games_betkey_pkey;
    INSERT INTO games_betkey (client_id, idempotency_key, bet_id)
        SELECT client_id, idempotency_key, id FROM games_bet;
    ALTER TABLE games_betkey ADD CONSTRAINT games_betkey_pkey PRIMARY KEY (client_id, idempotency_key);
"""


class Migration(migrations.Migration):

    dependencies = [
        ("games", "0014_client_seed_alphabet"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="BetKey",
            fields=[
                ("pk", models.CompositePrimaryKey("client_id", "idempotency_key", blank=True, editable=False,
                                                  primary_key=True, serialize=False)),
                ("client", models.ForeignKey(db_constraint=False, db_index=False,
                                             on_delete=django.db.models.deletion.DO_NOTHING, related_name="+",
                                             to=settings.AUTH_USER_MODEL)),
                ("idempotency_key", models.CharField(max_length=100)),
                ("bet", models.ForeignKey(db_constraint=False, db_index=False,
                                          on_delete=django.db.models.deletion.DO_NOTHING, related_name="+",
                                          to="games.bet")),
            ],
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
        append_only("games_betkey"),
        migrations.RemoveConstraint(model_name="bet", name="bet_idempotency_key_unique"),
    ]
