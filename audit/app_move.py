"""For migrations that move a model to another app and keep its table: its content type moves too,
so every permission granted on the model (to groups and users) and every admin log entry stays
attached to it."""

from django.db import migrations


def move_content_types(old_app_label: str, new_app_label: str, model_names) -> migrations.RunPython:
    def forwards(apps, schema_editor):
        _move(apps, old_app_label, new_app_label, model_names)

    def backwards(apps, schema_editor):
        _move(apps, new_app_label, old_app_label, model_names)

    return migrations.RunPython(forwards, backwards)


def _move(apps, source: str, target: str, model_names) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model in model_names:
        if not ContentType.objects.filter(app_label=target, model=model).exists():
            ContentType.objects.filter(app_label=source, model=model).update(app_label=target)
