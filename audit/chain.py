"""The hash chain of the audit trail: each event's hash covers the previous event's hash and the
event's own canonical content."""

import hashlib
import json
from datetime import UTC

GENESIS_HASH = "0" * 64

# The fields that an event's hash covers, in this order.
HASHED_FIELDS = (
    "created_at", "actor", "actor_user_id", "action", "object_type", "object_id",
    "before", "after", "reason", "request_id", "source_ip",
)


def canonical_content(values: dict) -> str:
    """The event as canonical JSON: fixed keys, sorted, no insignificant white space."""
    content = {name: values[name] for name in HASHED_FIELDS}
    content["created_at"] = content["created_at"].astimezone(UTC).isoformat()
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(prev_hash: str, values: dict) -> str:
    return hashlib.sha256((prev_hash + canonical_content(values)).encode("utf-8")).hexdigest()
