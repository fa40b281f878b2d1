"""Database URLs both ways: DATABASE_URL into Django's settings, and a settings dict back into a URL
or psycopg's keywords for another process or tool (a worker, gunicorn, pgbench, a second connection).

A Unix-socket host travels in the URL's query (``postgres://user@/name?host=/path``), as libpq
reads it: a URL's host part is case-folded by parsers, a directory's letters must not be.
"""

from urllib.parse import quote, urlencode

import dj_database_url

# Django's backend, whose health check asks the server only when the socket says something happened
# (dbutils/postgresql/base.py): a round trip less on every request.
ENGINE = "dbutils.postgresql"


def parse(url: str) -> dict:
    """Django's settings dict of ``url`` (postgres:// or postgresql://), on this project's backend."""
    if not url.startswith(("postgres://", "postgresql://")):
        raise ValueError("DATABASE_URL must name a PostgreSQL database (postgres://user@host:port/name)")
    params = dj_database_url.parse(url)
    options = params.setdefault("OPTIONS", {})
    if "host" in options:
        params["HOST"] = options.pop("host")
    if "port" in options:
        params["PORT"] = options.pop("port")
    params["ENGINE"] = ENGINE
    return params


def to_url(params: dict, *, name: str | None = None, user: str | None = None, password: str | None = None,
           **query) -> str:
    """The URL of ``params``'s server, for database ``name`` as ``user`` (each defaults to ``params``'s);
    ``query`` adds connection parameters (application_name=…)."""
    user = params.get("USER") or "" if user is None else user
    password = params.get("PASSWORD") or "" if password is None else password
    host, port = params.get("HOST") or "", str(params.get("PORT") or "")
    credentials = quote(user, safe="") + (":" + quote(password, safe="") if password else "")
    if host.startswith("/"):
        query = {"host": host, **({"port": port} if port else {}), **query}
        netloc = f"{credentials}@" if credentials else ""
    else:
        netloc = (f"{credentials}@" if credentials else "") + (host or "127.0.0.1") + (f":{port}" if port else "")
    suffix = f"?{urlencode(query, safe='/')}" if query else ""
    return f"postgres://{netloc}/{quote(name or params['NAME'], safe='')}{suffix}"


def conninfo(params: dict, *, name: str | None = None, **overrides) -> dict:
    """psycopg.connect's keywords for ``params``'s server (database ``name``, default ``params``'s)."""
    keywords = {"dbname": name or params["NAME"], "user": params.get("USER") or None,
                "password": params.get("PASSWORD") or None, "host": params.get("HOST") or None,
                "port": params.get("PORT") or None}
    keywords.update(overrides)
    return {key: value for key, value in keywords.items() if value is not None}
