"""Four eyes on a game that may take bets: its creation (active) and its activation."""

from django.db import migrations, models

ACTIONS = [("game.update", "Game configuration change"), ("game.create", "Creation of an active game"),
           ("game.activate", "Activation of a game"), ("account.adjust", "Balance adjustment"),
           ("round.void", "Void of a dealt round")]


class Migration(migrations.Migration):

    dependencies = [
        ("approvals", "0002_expiry_schedule"),
    ]

    operations = [
        migrations.AlterField(
            model_name="approval",
            name="action",
            field=models.CharField(choices=ACTIONS, max_length=32),
        ),
        migrations.RemoveConstraint(model_name="approval", name="approval_action_valid"),
        migrations.AddConstraint(
            model_name="approval",
            constraint=models.CheckConstraint(
                condition=models.Q(("action__in", [value for value, _label in ACTIONS])),
                name="approval_action_valid"),
        ),
    ]
