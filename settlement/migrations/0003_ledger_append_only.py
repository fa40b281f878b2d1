"""The ledger is append-only in the database itself: UPDATE and DELETE of an entry are refused."""

from django.db import migrations

TABLE = "settlement_ledgerentry"

POSTGRES_UP = f"""
CREATE OR REPLACE FUNCTION ledger_entry_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the ledger is append-only: % of a ledger entry refused', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER ledger_entry_append_only BEFORE UPDATE OR DELETE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION ledger_entry_append_only();
"""
POSTGRES_DOWN = f"""
DROP TRIGGER IF EXISTS ledger_entry_append_only ON {TABLE};
DROP FUNCTION IF EXISTS ledger_entry_append_only();
"""
# The embedded SQLite (development) refuses updates only: Django's flush empties tables with DELETE
# there, while on PostgreSQL it uses TRUNCATE, which row triggers do not see.
SQLITE_UP = [
    f"""CREATE TRIGGER ledger_entry_no_update BEFORE UPDATE ON {TABLE}
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: UPDATE of a ledger entry refused'); END;"""
]
SQLITE_DOWN = ["DROP TRIGGER IF EXISTS ledger_entry_no_update;"]


def install(apps, schema_editor):
    statements = [POSTGRES_UP] if schema_editor.connection.vendor == "postgresql" else SQLITE_UP
    for statement in statements:
        schema_editor.execute(statement, params=None)


def remove(apps, schema_editor):
    statements = [POSTGRES_DOWN] if schema_editor.connection.vendor == "postgresql" else SQLITE_DOWN
    for statement in statements:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("settlement", "0002_settlement_sweep_schedule")]

    operations = [migrations.RunPython(install, remove)]
