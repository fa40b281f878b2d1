"""A request keeps the name of what it acts on (a game's slug) for its title; the requests stored
before are named after their game as it is now."""

from django.db import migrations, models


def name_stored_game_requests(apps, schema_editor):
    Approval = apps.get_model("approvals", "Approval")
    GameInstance = apps.get_model("games", "GameInstance")
    for pk, slug in GameInstance.objects.values_list("pk", "slug"):
        Approval.objects.filter(object_type="gameinstance", object_id=str(pk), object_name="").update(
            object_name=slug)


class Migration(migrations.Migration):

    dependencies = [
        ("approvals", "0003_game_create_actions"),
        ("games", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="approval",
            name="object_name",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.RunPython(name_stored_game_requests, migrations.RunPython.noop),
    ]
