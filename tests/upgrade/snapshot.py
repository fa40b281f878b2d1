"""A snapshot of a database in plain SQL (psycopg), so that it reads the same whichever code made it.

No ORM on purpose: the upgrade moves models between apps, and the snapshot must describe the tables
as they are, before and after. Nothing here imports the project's apps.
"""

from collections import Counter
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

EXCLUDED_TABLES = {"django_migrations"}

# Tables whose rows ``migrate`` may legitimately rewrite or add to; every other table must come out
# of the upgrade with the same rows, column for column (over the columns it had before).
#   django_content_type: moved models keep their content type row, renamed in place (app_label);
#   auth_permission: kept by id and codename (its ``name`` follows verbose names), new models add rows;
#   auth_group_permissions: post_migrate re-syncs the role groups (the administrators get every
#     permission there is); grants are compared by (group, permission id) instead;
#   django_celery_beat_*: migrations may re-point or re-save the schedules (compared by primary key).
REWRITABLE_TABLES = {"django_content_type", "auth_permission", "auth_group_permissions"}
REWRITABLE_PREFIXES = ("django_celery_beat_",)
# Of those, the ones that may also gain rows (new models, new permissions, a schedule's change marker,
# the periodic tasks a release adds and their intervals), and auth_group, whose rows are kept as they
# were but gain the role groups a release adds (post_migrate makes them).
GROWING_TABLES = {"django_content_type", "auth_permission", "auth_group_permissions", "auth_group",
                  "django_celery_beat_periodictasks", "django_celery_beat_periodictask",
                  "django_celery_beat_intervalschedule"}
# Compared by meaning only (their own row ids may change when a grant is re-made): the group grants.
BY_MEANING_ONLY = {"auth_group_permissions"}
# Tables an upgrade replaces on purpose, and by what; the upgrade test checks what became of their rows.
#   authtoken_token: the clear-text API tokens, kept as keyed digests in apitokens_apitoken (apitokens 0002).
REPLACED_TABLES = {"authtoken_token": "apitokens_apitoken"}


def rewritable(table: str) -> bool:
    return table in REWRITABLE_TABLES or table.startswith(REWRITABLE_PREFIXES)


def connect(url: str, **kwargs) -> psycopg.Connection:
    return psycopg.connect(url, connect_timeout=5, options="-c TimeZone=UTC -c DateStyle=ISO", **kwargs)


@dataclass
class Snapshot:
    counts: dict = field(default_factory=dict)          # table -> rows
    columns: dict = field(default_factory=dict)         # table -> [column, ...]
    rows: dict = field(default_factory=dict)            # table -> {primary key text: md5 of the row}
    fingerprints: dict = field(default_factory=dict)    # table -> md5 over its rows in key order
    content_types: dict = field(default_factory=dict)   # id -> (app_label, model)
    permissions: dict = field(default_factory=dict)     # id -> (codename, content_type_id, "app.codename")
    group_grants: dict = field(default_factory=dict)    # group name -> {permission id}
    user_grants: dict = field(default_factory=dict)     # username -> {permission id} (own and via groups)
    ledger_kinds: Counter = field(default_factory=Counter)
    sequences: dict = field(default_factory=dict)       # table -> (sequence last value, max id)

    def label(self, permission_id: int) -> str:
        codename, _ct, label = self.permissions.get(permission_id, ("?", None, "?"))
        return f"{label} (id {permission_id})"


def tables(cursor) -> list:
    cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
    return [name for (name,) in cursor.fetchall() if name not in EXCLUDED_TABLES]


def table_columns(cursor, table: str) -> list:
    cursor.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' "
                   "AND table_name = %s ORDER BY ordinal_position", [table])
    return [name for (name,) in cursor.fetchall()]


def primary_key(cursor, table: str) -> list:
    cursor.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
        "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary ORDER BY a.attnum",
        [f'public."{table}"'],
    )
    return [name for (name,) in cursor.fetchall()]


def numeric_columns(cursor, table: str) -> set:
    cursor.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' "
                   "AND table_name = %s AND data_type = 'numeric'", [table])
    return {name for (name,) in cursor.fetchall()}


def row_hashes(cursor, table: str, columns: list) -> dict:
    """{primary key as text: md5 of the row's text over ``columns``}, for every row of the table.
    Numbers are read by value (trim_scale): a column given more decimal places keeps 10.00 as
    10.00000000, the same amount."""
    key = primary_key(cursor, table)
    numeric = numeric_columns(cursor, table)
    values = sql.SQL(", ").join(sql.SQL("trim_scale({})").format(sql.Identifier(column)) if column in numeric
                                else sql.Identifier(column) for column in columns)
    if key:
        key_sql = sql.SQL("ROW({})::text").format(sql.SQL(", ").join(sql.Identifier(column) for column in key))
    else:
        key_sql = sql.SQL("NULL")
    cursor.execute(sql.SQL("SELECT {key}, md5(ROW({values})::text) FROM {table}").format(
        key=key_sql, values=values, table=sql.Identifier(table)))
    if key:
        return dict(cursor.fetchall())
    seen = Counter()  # no primary key: rows are told apart by their content (and how often it repeats)
    hashes = {}
    for _key, digest in cursor.fetchall():
        seen[digest] += 1
        hashes[f"{digest}#{seen[digest]}"] = digest
    return hashes


def fingerprint(hashes: dict) -> str:
    import hashlib

    return hashlib.md5("\n".join(f"{key}={hashes[key]}" for key in sorted(hashes)).encode()).hexdigest()


def take(url: str, columns: dict | None = None) -> Snapshot:
    """Read the whole database. ``columns`` (table -> columns of an earlier snapshot) makes each
    row's hash cover the same columns as then, so that a column the upgrade adds changes nothing."""
    snap = Snapshot()
    with connect(url) as conn, conn.cursor() as cursor:
        for table in tables(cursor):
            cursor.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table)))
            snap.counts[table] = cursor.fetchone()[0]
            snap.columns[table] = table_columns(cursor, table)
            wanted = snap.columns[table]
            if columns is not None and table in columns:
                wanted = [column for column in columns[table] if column in snap.columns[table]]
            snap.rows[table] = row_hashes(cursor, table, wanted)
            snap.fingerprints[table] = fingerprint(snap.rows[table])
            if "id" in snap.columns[table]:
                cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [f'public."{table}"'])
                sequence = cursor.fetchone()[0]
                if sequence:
                    cursor.execute(sql.SQL("SELECT (SELECT last_value FROM {}), (SELECT max(id) FROM {})").format(
                        sql.SQL(sequence), sql.Identifier(table)))
                    snap.sequences[table] = cursor.fetchone()
        cursor.execute("SELECT id, app_label, model FROM django_content_type")
        snap.content_types = {id_: (app, model) for id_, app, model in cursor.fetchall()}
        cursor.execute("SELECT p.id, p.codename, p.content_type_id, ct.app_label || '.' || p.codename "
                       "FROM auth_permission p JOIN django_content_type ct ON ct.id = p.content_type_id")
        snap.permissions = {id_: (codename, ct, label) for id_, codename, ct, label in cursor.fetchall()}
        cursor.execute("SELECT g.name, gp.permission_id FROM auth_group g "
                       "LEFT JOIN auth_group_permissions gp ON gp.group_id = g.id")
        for name, permission_id in cursor.fetchall():
            grants = snap.group_grants.setdefault(name, set())
            if permission_id is not None:
                grants.add(permission_id)
        cursor.execute(
            "SELECT u.username, up.permission_id FROM auth_user u "
            "LEFT JOIN auth_user_user_permissions up ON up.user_id = u.id "
            "UNION SELECT u.username, gp.permission_id FROM auth_user u "
            "JOIN auth_user_groups ug ON ug.user_id = u.id JOIN auth_group_permissions gp ON gp.group_id = ug.group_id")
        for username, permission_id in cursor.fetchall():
            grants = snap.user_grants.setdefault(username, set())
            if permission_id is not None:
                grants.add(permission_id)
        if "settlement_ledgerentry" in snap.counts:
            cursor.execute("SELECT kind || CASE WHEN amount < 0 THEN '-' ELSE '+' END, count(*) "
                           "FROM settlement_ledgerentry GROUP BY 1")
            snap.ledger_kinds = Counter(dict(cursor.fetchall()))
    return snap


def _sample(keys, limit: int = 5) -> str:
    keys = sorted(keys)
    more = f" … and {len(keys) - limit} more" if len(keys) > limit else ""
    return ", ".join(str(key) for key in keys[:limit]) + more


def compare(before: Snapshot, after: Snapshot) -> list:
    """Every way ``after`` lost or changed what ``before`` held, one readable line each."""
    problems = []
    for table, count in sorted(before.counts.items()):
        if table not in after.counts:
            if table not in REPLACED_TABLES:
                problems.append(f"table {table} ({count} rows) is gone")
            continue
        dropped = [column for column in before.columns[table] if column not in after.columns[table]]
        if dropped:
            problems.append(f"table {table}: columns {dropped} are gone")
        grows = table in GROWING_TABLES
        if after.counts[table] != count and not (grows and after.counts[table] > count):
            problems.append(f"table {table}: {count} rows before the upgrade, {after.counts[table]} after")
        if table in BY_MEANING_ONLY:
            continue
        old_rows, new_rows = before.rows[table], after.rows[table]
        missing = old_rows.keys() - new_rows.keys()
        if missing:
            problems.append(f"table {table}: {len(missing)} rows lost, keys {_sample(missing)}")
        if rewritable(table):
            continue
        added = new_rows.keys() - old_rows.keys()
        if added and not grows:
            problems.append(f"table {table}: {len(added)} rows appeared, keys {_sample(added)}")
        changed = [key for key in old_rows.keys() & new_rows.keys() if old_rows[key] != new_rows[key]]
        if changed:
            problems.append(f"table {table}: {len(changed)} rows changed (fingerprint {before.fingerprints[table]} "
                            f"-> {after.fingerprints[table]}), keys {_sample(changed)}")
    for table, (last_value, max_id) in sorted(after.sequences.items()):
        if max_id is not None and last_value < max_id:
            problems.append(f"table {table}: its id sequence stands at {last_value}, below max(id) {max_id} "
                            f"(the next insert collides)")
    for id_, (app_label, model) in sorted(before.content_types.items()):
        now = after.content_types.get(id_)
        if now is None:
            problems.append(f"content type {id_} ({app_label}.{model}) is gone")
        elif now[1] != model:
            problems.append(f"content type {id_} was {app_label}.{model}, is now {now[0]}.{now[1]}")
    for id_, (codename, content_type_id, label) in sorted(before.permissions.items()):
        now = after.permissions.get(id_)
        if now is None:
            problems.append(f"permission {label} (id {id_}) is gone")
        elif now[:2] != (codename, content_type_id):
            problems.append(f"permission id {id_} was {label} on content type {content_type_id}, "
                            f"is now {now[2]} on content type {now[1]}")
    for name, grants in sorted(before.group_grants.items()):
        if name not in after.group_grants:
            problems.append(f"group {name!r} is gone")
            continue
        lost = grants - after.group_grants[name]
        if lost:
            problems.append(f"group {name!r} lost {len(lost)} of its permissions: "
                            f"{_sample(before.label(id_) for id_ in lost)}")
    for username, grants in sorted(before.user_grants.items()):
        lost = grants - after.user_grants.get(username, set())
        if lost:
            problems.append(f"user {username!r} lost {len(lost)} of its permissions: "
                            f"{_sample(before.label(id_) for id_ in lost)}")
    return problems
