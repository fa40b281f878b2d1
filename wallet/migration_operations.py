"""Migration operations of our own."""

from django.db import migrations


class AddConstraintNotValid(migrations.AddConstraint):
    """Add a CHECK that every new or changed row must pass, keeping the rows already there.

    The constraint is added NOT VALID: rows written from now on are checked, rows an earlier release
    accepted are kept as they are (an upgrade keeps every row).
    """

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.execute(f"{self.constraint.create_sql(model, schema_editor)} NOT VALID")


class AlterForeignKeyIndex(migrations.AlterField):
    """Turn a foreign key's own single-column index off (or on), leaving its constraint alone.

    Django's AlterField drops and re-adds the foreign key constraint to change db_index (adding it
    back checks every row of the table under a lock). Here only the index is dropped (or created),
    under the name Django gave it.
    """

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        self._match_index(app_label, schema_editor, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        self._match_index(app_label, schema_editor, to_state)

    def _match_index(self, app_label, schema_editor, state):
        model = state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        field = model._meta.get_field(self.name)
        table = model._meta.db_table
        quote = schema_editor.quote_name
        index = quote(schema_editor._create_index_name(table, [field.column]))
        if field.db_index:
            schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {index} ON {quote(table)} ({quote(field.column)})")
        else:
            schema_editor.execute(f"DROP INDEX IF EXISTS {index}")
