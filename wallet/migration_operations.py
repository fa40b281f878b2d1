"""Migration operations of our own."""

from django.db import migrations


class AddConstraintNotValid(migrations.AddConstraint):
    """Add a CHECK that every new or changed row must pass, keeping the rows already there.

    On PostgreSQL the constraint is added NOT VALID: rows written from now on are checked, rows an
    earlier release accepted are kept as they are (an upgrade keeps every row). Elsewhere (the
    embedded SQLite) it is added as usual.
    """

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.execute(f"{self.constraint.create_sql(model, schema_editor)} NOT VALID")
