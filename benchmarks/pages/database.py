"""The database of its own: ``<configured name>_pages_bench``, next to the configured one (never written)."""


import psycopg
from django.conf import settings
from django.db import connections

from benchmarks.database import create_database, database_exists, drop_database, server_connection
from dbutils.postgresql import urls

SUFFIX = "_pages_bench"


def bench_database_name(name: str) -> str:
    return name if name.endswith(SUFFIX) else f"{name}{SUFFIX}"


def prepare(source: dict, name: str, *, reuse: bool) -> bool:
    """Create the bench database afresh; True (and untouched) when ``reuse`` finds it holding bets."""
    with server_connection(source, autocommit=True) as maintenance:
        if reuse and database_exists(maintenance, name) and _holds_bets(source, name):
            return True
        drop_database(maintenance, name)
        create_database(maintenance, name)
    return False


def _holds_bets(source: dict, name: str) -> bool:
    try:
        with server_connection(source, dbname=name) as bench:
            return bench.execute("SELECT count(*) FROM games_bet").fetchone()[0] > 0
    except psycopg.Error:  # not migrated, or half built: build it again
        return False


def drop(source: dict, name: str) -> None:
    connections.close_all()
    with server_connection(source, autocommit=True) as maintenance:
        drop_database(maintenance, name)


def switch_to(name: str) -> None:
    """Point Django's default connection, in this process, at the database ``name``."""
    connections.close_all()
    settings.DATABASES["default"]["NAME"] = name
    connections["default"].settings_dict["NAME"] = name


def database_url(name: str) -> str:
    """A DATABASE_URL of the database ``name`` on the configured server, for the server process."""
    return urls.to_url(settings.DATABASES["default"], name=name)
