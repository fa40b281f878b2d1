"""PostgreSQL: every statement that changes a table token authentication reads from NOTIFYs
``auth_changed`` (backoffice.api.token_rows), delivered when its transaction commits. Statement
triggers, so a change of many rows is one notice; TRUNCATE too. Other databases keep no rows and
get no triggers. The token table's own trigger is the apitokens app's (it was DRF's authtoken
table's here, until the tokens became digests and that table went: apitokens 0002)."""

from django.db import migrations

CHANNEL = "auth_changed"
FUNCTION = "notify_auth_changed"


def _tables(apps) -> list[str]:
    user, group = apps.get_model("auth", "User"), apps.get_model("auth", "Group")
    models = [user, group, apps.get_model("auth", "Permission"),
              apps.get_model("contenttypes", "ContentType"), user.groups.through, user.user_permissions.through,
              group.permissions.through]
    return [model._meta.db_table for model in models]


def install(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"""
        CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger AS $$
        BEGIN
            PERFORM pg_notify('{CHANNEL}', TG_TABLE_NAME);
            RETURN NULL;
        END;
        $$ LANGUAGE plpgsql""", params=None)
    for table in _tables(apps):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_{CHANNEL} ON {table}", params=None)
        schema_editor.execute(f"CREATE TRIGGER {table}_{CHANNEL} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
                              f"ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}()", params=None)


def remove(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in _tables(apps):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_{CHANNEL} ON {table}", params=None)
    schema_editor.execute(f"DROP FUNCTION IF EXISTS {FUNCTION}()", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(install, remove)]
