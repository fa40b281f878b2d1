"""Create the PostgreSQL database a URL names, when it does not exist yet (``make prod-setup``).

    python -m baccarat_site.ensure_database MIGRATION_URL [--app-url APP_URL] [--check-only]

Connects to the same server's ``postgres`` database with the URL's credentials; idempotent. With
``--app-url``, first refuses (one line, exit 1) when the application's URL names another database or
server than the migrations' URL: migrations would go to one database and the application to another.
``--check-only`` makes that check and nothing else.
"""

import argparse

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


def _where(url: str) -> tuple:
    """The server and database a URL names (never its user or password)."""
    params = conninfo_to_dict(url)
    return params.get("host") or "", str(params.get("port") or "5432"), params.get("dbname") or ""


def mismatch(migration_url: str, app_url: str) -> str | None:
    """Why the two URLs do not name the same database, or None when they do."""
    migrations, app = _where(migration_url), _where(app_url)
    if migrations == app:
        return None
    return (f"the application's database ({app[2]} on {app[0]}:{app[1]}) is not the migrations' "
            f"({migrations[2]} on {migrations[0]}:{migrations[1]}): set PROD_DATABASE_URL and "
            "MIGRATION_DATABASE_URL to the same database")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m baccarat_site.ensure_database")
    parser.add_argument("url")
    parser.add_argument("--app-url")
    parser.add_argument("--check-only", action="store_true")
    args = parser.parse_args(argv)
    if args.app_url and (problem := mismatch(args.url, args.app_url)):
        raise SystemExit(f"make prod: refused: {problem}")
    if not args.check_only:
        name = _where(args.url)[2]
        print(f"database {name}: {'created' if ensure_database(args.url) else 'exists'}")


if __name__ == "__main__":
    main()
