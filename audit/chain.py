"""What an audit event's hashes cover: its canonical content.

Each event's Merkle leaf is the hash of its entry (``leaf_entry``: the event id and its content).
Events written before the Merkle log also carry the hash chain they were written with: each hash
covers the previous event's hash and the event's content (``event_hash``).
"""

import hashlib
import json
from datetime import UTC

GENESIS_HASH = "0" * 64

# The fields that an event's hashes cover, in this order.
HASHED_FIELDS = (
    "created_at", "actor", "actor_user_id", "action", "object_type", "object_id",
    "before", "after", "reason", "request_id", "source_ip",
)


def _content(values: dict) -> dict:
    content = {name: values[name] for name in HASHED_FIELDS}
    content["created_at"] = content["created_at"].astimezone(UTC).isoformat()
    return content


def _canonical(content: dict) -> str:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_content(values: dict) -> str:
    """The event as canonical JSON: fixed keys, sorted, no insignificant white space."""
    return _canonical(_content(values))


def event_hash(prev_hash: str, values: dict) -> str:
    return hashlib.sha256((prev_hash + canonical_content(values)).encode("utf-8")).hexdigest()


def leaf_entry(values: dict) -> bytes:
    """The event's entry in the Merkle log, UTF-8 canonical JSON of its id and content: anyone holding
    the event (the API, the CSV export) can rebuild it and hash it as SHA-256(0x00 ‖ entry)."""
    return _canonical({"id": values["id"], **_content(values)}).encode("utf-8")
