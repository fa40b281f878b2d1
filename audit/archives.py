"""Archived months of audit events, as the signed log records them, and their files checked.

An archive is an audit event (``partitions.archived``) carrying each month's manifest: its id range,
row count and the SHA-256 of its file. That event has its leaf in the log like any other, so a signed
head vouches for the manifest, and the manifest for the file. The leaves of archived events stay
online; audit_verify puts their stored hashes into the roots it checks against the signed heads, and
given the files, recomputes each from its archived event and checks the file's SHA-256 against the
manifest in the log (never against the manifest beside the file, which anyone could rewrite).
"""

import gzip
import hashlib
import json
import re
from datetime import datetime
from pathlib import Path

from django.db import DEFAULT_DB_ALIAS

from audit import merkle
from audit.chain import HASHED_FIELDS, leaf_entry
from audit.choices import AuditAction
from audit.models import AuditEvent, AuditLeaf

CHUNK = 2000
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}
_ESCAPE = re.compile(r"\\([bfnrtv\\]|[0-7]{1,3})")


def archived_manifests(*, using: str = DEFAULT_DB_ALIAS) -> dict:
    """{(table, id_from, id_to): manifest} of the months the log says were archived and not
    restored since (the ``partitions.archived`` and ``partitions.restored`` events, in order)."""
    found = {}
    events = AuditEvent.objects.using(using).filter(
        action__in=[AuditAction.PARTITIONS_ARCHIVED, AuditAction.PARTITIONS_RESTORED]).order_by("id")
    for action, after in events.values_list("action", "after"):
        for manifest in (after or {}).get("manifests", []):
            key = (manifest.get("table"), manifest["id_from"], manifest["id_to"])
            if action == AuditAction.PARTITIONS_ARCHIVED:
                found[key] = manifest
            else:
                found.pop(key, None)
    return found


def archived_ranges() -> dict:
    """{(id_from, id_to): manifest} of the audit events' months archived and not restored since."""
    table = AuditEvent._meta.db_table
    return {(low, high): manifest for (of, low, high), manifest in archived_manifests().items() if of == table}


def _field(text: str):
    if text == "\\N":
        return None
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m[1]) or chr(int(m[1], 8)), text)


def _values(line: bytes, columns: list) -> dict:
    """An event's values as the ORM reads them, from a line of COPY's text format."""
    row = dict(zip(columns, (_field(part) for part in line.decode("utf-8").rstrip("\n").split("\t")), strict=True))
    values = {"id": int(row["id"]), **{name: row[name] for name in HASHED_FIELDS}}
    values["created_at"] = datetime.fromisoformat(values["created_at"])
    if values["actor_user_id"] is not None:
        values["actor_user_id"] = int(values["actor_user_id"])
    for name in ("before", "after"):
        if values[name] is not None:
            values[name] = json.loads(values[name])
    return values


def _check_file(manifest: dict, file: Path) -> tuple[int, str | None]:
    """(leaves checked, problem) of one archived month's file against the log."""
    digest = hashlib.sha256()
    with open(file, "rb") as data:
        while block := data.read(1 << 20):
            digest.update(block)
    if digest.hexdigest() != manifest["sha256"]:
        return 0, f"archive file {file.name} is not the one the log's manifest names (SHA-256 differs)"
    checked, batch = 0, []
    with gzip.open(file, "rb") as lines:
        for line in [*lines, None]:
            if line is not None:
                batch.append(_values(line, manifest["columns"]))
                if len(batch) < CHUNK:
                    continue
            stored = dict(AuditLeaf.objects.filter(event_id__in=[v["id"] for v in batch])
                          .values_list("event_id", "hash"))
            for values in batch:
                if merkle.leaf_hash(leaf_entry(values)).hex() != stored.get(values["id"]):
                    return checked, (f"altered event: archived event {values['id']} ({file.name}) does not give "
                                     f"its leaf hash")
                checked += 1
            batch = []
    leaves = AuditLeaf.objects.filter(event_id__gte=manifest["id_from"], event_id__lt=manifest["id_to"]).count()
    if checked != leaves:
        return checked, f"missing event: {file.name} holds {checked} events, the log {leaves} leaves of that month"
    return checked, None


def check_archives(check, archived: dict, directory: Path) -> None:
    """Check the archived months' files found in ``directory`` (named as their manifests in the
    log say); ``check.archived_checked`` counts the leaves checked, ``check.problem`` the first fault."""
    for manifest in archived.values():
        file = directory / manifest["file"]
        if not file.is_file():
            continue
        checked, problem = _check_file(manifest, file)
        check.archived_checked += checked
        if problem:
            check.problem = problem
            return
