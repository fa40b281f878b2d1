"""The PostgreSQL server behind Django's connection, reached directly: the benchmarks create, fill
and drop databases of their own, which Django's connection (bound to one database) cannot do."""

import psycopg
from psycopg import sql

from dbutils.postgresql import urls


def server_connection(params: dict, dbname: str = "postgres", **options) -> psycopg.Connection:
    """A psycopg connection to ``dbname`` on the server of the Django settings ``params``; the
    default, the maintenance database, is where CREATE and DROP DATABASE run."""
    return psycopg.connect(**urls.conninfo(params, name=dbname), connect_timeout=10, **options)


def database_exists(maintenance: psycopg.Connection, name: str) -> bool:
    return maintenance.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


def create_database(maintenance: psycopg.Connection, name: str) -> None:
    maintenance.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(maintenance: psycopg.Connection, name: str) -> None:
    maintenance.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
