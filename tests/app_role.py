"""The tests run the application as its restricted database role, as production does.

pytest-django creates and migrates the test database as the tables' owner (DATABASE_URL's user);
then ``db_roles`` makes the application role ($TEST_APP_ROLE) on it, and the default connection logs
in as that role, so every test, the live server and the Celery workers the tests start (their
DATABASE_URL is made from the same settings) run with only the application's privileges. What needs
the owner asks for it: ``as_owner()`` outside a transaction (the transactional tests' flush, which
TRUNCATEs; a benchmark's CREATE DATABASE takes ``owner_settings()``), the ``owner`` marker for a
whole test (an insider tampering inside the test's own transaction).
"""

import os
import secrets
from contextlib import contextmanager
from io import StringIO

from django.core.management import call_command
from django.db import connections

# Cluster-wide, unlike the test database: parallel runs on one server each need a name of their own.
APP_ROLE = os.environ.get("TEST_APP_ROLE", "baccarat_test_app")
APP_PASSWORD = secrets.token_urlsafe(24)  # set anew by db_roles at every run


class _Logins:
    owner: tuple[str, str] | None = None  # (USER, PASSWORD) of DATABASE_URL, once the app role exists
    wanted = "app"


def _settings() -> dict:
    return connections["default"].settings_dict


def _credentials(which: str) -> tuple[str, str]:
    return _Logins.owner if which == "owner" else (APP_ROLE, APP_PASSWORD)


def login(which: str) -> None:
    """From now on the default connection logs in as ``which`` ("app" or "owner"): it is closed, and
    the next query reconnects (as do the live server's threads, which share its settings)."""
    _Logins.wanted = which
    if _Logins.owner is None:
        return  # before the test database exists: start() logs in as wanted
    settings = _settings()
    user, password = _credentials(which)
    if (settings["USER"], settings["PASSWORD"]) == (user, password):
        return
    connection = connections["default"]
    assert not connection.in_atomic_block, "cannot change the login inside the test's transaction"
    connection.close()
    settings["USER"], settings["PASSWORD"] = user, password


def start() -> None:
    """On the freshly migrated test database, as its owner: make the app role, then log in as wanted."""
    settings = _settings()
    call_command("db_roles", APP_ROLE, f"--password={APP_PASSWORD}", stdout=StringIO())  # may begin with "-"
    _Logins.owner = (settings["USER"], settings["PASSWORD"])
    login(_Logins.wanted)


def stop() -> None:
    """Back to the owner, who drops the test database."""
    if _Logins.owner is not None:
        login("owner")
        _Logins.owner = None


@contextmanager
def as_owner():
    """The default connection logs in as the owner inside the block (outside any transaction)."""
    previous = _Logins.wanted
    login("owner")
    try:
        yield connections["default"]
    finally:
        login(previous)


def owner_settings() -> dict:
    """The default connection's settings with the owner's credentials, for connections of one's own."""
    settings = dict(_settings())
    if _Logins.owner is not None:
        settings["USER"], settings["PASSWORD"] = _Logins.owner
    return settings
