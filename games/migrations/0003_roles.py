from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import migrations


def create_role_groups(apps, schema_editor):
    from backoffice.roles import sync_role_groups

    # Permissions are normally created after all migrations; create them now so groups get them.
    for app_config in global_apps.get_app_configs():
        create_permissions(app_config, verbosity=0, apps=apps)
    sync_role_groups(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0002_initial"),
        ("settlement", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_role_groups, migrations.RunPython.noop)]
