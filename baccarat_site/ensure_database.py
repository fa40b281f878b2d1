"""Create the PostgreSQL database a URL names, when it does not exist yet (``make prod-setup``).

    python -m baccarat_site.ensure_database postgres://user@host:5432/name

Connects to the same server's ``postgres`` database with the URL's credentials; idempotent.
"""

import sys

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict


def ensure_database(url: str) -> bool:
    """True when the database was created, False when it was already there."""
    name = conninfo_to_dict(url).get("dbname")
    if not name:
        raise SystemExit(f"no database name in {url!r}")
    with psycopg.connect(url, dbname="postgres", autocommit=True, connect_timeout=5) as server:
        if server.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return False
        server.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return True


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    database = conninfo_to_dict(sys.argv[1]).get("dbname")
    print(f"database {database}: {'created' if ensure_database(sys.argv[1]) else 'exists'}")
