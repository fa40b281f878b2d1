"""Append-only tables in the database itself: triggers refuse UPDATE and DELETE of a row.

Django's flush empties tables with TRUNCATE, which row triggers do not see. Migrations call
``append_only(table)`` to get their operation; installing it again is harmless.
"""

from django.db import migrations

_POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION refuse_change_of_append_only_row() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the table % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
"""


def trigger_name(table: str) -> str:
    """The trigger that keeps ``table`` append-only."""
    return f"{table}_append_only"


def _statements(table: str) -> tuple[list, list]:
    trigger = trigger_name(table)
    return (
        [_POSTGRES_FUNCTION,
         f"DROP TRIGGER IF EXISTS {trigger} ON {table};",
         f"CREATE TRIGGER {trigger} BEFORE UPDATE OR DELETE ON {table} "
         f"FOR EACH ROW EXECUTE FUNCTION refuse_change_of_append_only_row();"],
        [f"DROP TRIGGER IF EXISTS {trigger} ON {table};"],
    )


def append_only(table: str) -> migrations.RunPython:
    def install(apps, schema_editor):
        for statement in _statements(table)[0]:
            schema_editor.execute(statement, params=None)

    def remove(apps, schema_editor):
        for statement in _statements(table)[1]:
            schema_editor.execute(statement, params=None)

    return migrations.RunPython(install, remove)
