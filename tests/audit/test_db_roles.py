"""The application's database role cannot rewrite history: on the append-only tables it can read and
append, and nothing else, whatever the triggers. And the PostgreSQL pass runs as that role."""

import psycopg
import pytest
from django.core.management import call_command
from django.db import ProgrammingError, connection, transaction

from audit.services import audit_head_sign, audit_record
from dbutils.postgresql import urls as database_urls
from tests import app_role
from tests.audit.helpers import sequence_all

pytestmark = pytest.mark.services
# A role of this test's own beside the pass's (both cluster-wide: named after $TEST_APP_ROLE).
ROLE, PASSWORD = f"{app_role.APP_ROLE}_probe", "app-test-password"
APPEND_ONLY = {"games_auditevent": "reason", "audit_auditleaf": "hash", "audit_audithead": "signature",
               "settlement_ledgerentry": "id"}  # table: a column to rewrite


@pytest.fixture
def app_connection(postgres, funded_account):
    funded_account("player-1", "10.00")
    audit_record(actor="system:test", action="test.event", object_type="t", object_id="1")
    sequence_all()
    audit_head_sign()
    with app_role.as_owner():
        call_command("db_roles", ROLE, "--password", PASSWORD)
    app = psycopg.connect(**database_urls.conninfo(connection.settings_dict, user=ROLE, password=PASSWORD),
                          autocommit=True)
    yield app
    app.close()
    with app_role.as_owner(), connection.cursor() as cursor:
        cursor.execute(f"DROP OWNED BY {ROLE}")
        cursor.execute(f"DROP ROLE {ROLE}")


@pytest.mark.parametrize("table", APPEND_ONLY)
def test_the_application_role_reads_and_appends_but_cannot_rewrite(app_connection, table):
    assert app_connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0] >= 1
    column = APPEND_ONLY[table]
    for statement in (f"UPDATE {table} SET {column} = {column}", f"DELETE FROM {table}", f"TRUNCATE {table}",
                      f"ALTER TABLE {table} DISABLE TRIGGER ALL", f"DROP TABLE {table}"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            app_connection.execute(statement)


def test_the_application_role_owns_nothing_and_is_no_superuser(app_connection):
    role = app_connection.execute("SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles "
                                  "WHERE rolname = current_user").fetchone()
    assert role == (False, False, False)
    owned = app_connection.execute("SELECT count(*) FROM pg_tables WHERE tableowner = current_user").fetchone()[0]
    assert owned == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app_connection.execute("SET session_replication_role = replica")


def stored_password(role):
    with app_role.as_owner(), connection.cursor() as cursor:
        cursor.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", [role])
        return cursor.fetchone()[0]


def test_running_it_again_updates_the_role(app_connection):
    before = stored_password(ROLE)
    with app_role.as_owner():
        # A generated password may begin with "-": given as --password=P it is still the value.
        call_command("db_roles", ROLE, "--password=-" + PASSWORD)
    assert stored_password(ROLE) not in (before, None)
    assert app_connection.execute("SELECT 1").fetchone() == (1,)


def assert_the_application_role_runs_the_test():
    """The connection (and the services called through it) is the application role's, which may
    not rewrite history."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        assert cursor.fetchone() == (app_role.APP_ROLE,)
        for statement in ("UPDATE games_auditevent SET reason = reason", "TRUNCATE settlement_ledgerentry"):
            with pytest.raises(ProgrammingError, match="permission denied"), transaction.atomic():
                cursor.execute(statement)


def test_the_postgresql_pass_runs_as_the_application_role(db, funded_account):
    funded_account("player-1", "10.00")  # in the test's transaction, through the services
    assert_the_application_role_runs_the_test()


def test_a_test_with_committed_data_runs_as_the_application_role(postgres, funded_account):
    funded_account("player-1", "10.00")  # committed; the flush afterwards is the owner's
    assert_the_application_role_runs_the_test()


@pytest.mark.owner
def test_a_test_marked_owner_runs_as_the_tables_owner(postgres):
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user, (SELECT tableowner FROM pg_tables WHERE tablename = 'games_auditevent')")
        user, owner = cursor.fetchone()
    assert user == owner != app_role.APP_ROLE
