"""The audit trail as CSV: each event with its leaf index in the Merkle log, the first signed head
that covers it, and (events before the Merkle log) its ``prev_hash`` and ``hash``."""

from backoffice.admin.exports import Export, as_json, optional, text, when


def _audit_row(event) -> list:
    return [
        event.pk, when(event.created_at), text(event.actor), optional(event.actor_user_id), event.action,
        event.object_type, text(event.object_id), text(event.reason), as_json(event.before), as_json(event.after),
        text(event.request_id), event.source_ip or "", optional(event.leaf_index), optional(event.covered_by_head),
        event.prev_hash or "", event.hash or "",
    ]


AUDIT_EXPORT = Export(
    name="audit-events",
    header=("event_id", "created_at", "actor", "actor_user_id", "action", "object_type", "object_id", "reason",
            "before", "after", "request_id", "source_ip", "leaf_index", "covered_by_head", "prev_hash", "hash"),
    row=_audit_row,
)


def _auth_row(event) -> list:
    return [
        event.pk, when(event.created_at), event.action, text(event.outcome), text(event.username), text(event.actor),
        event.source_ip or "", text(event.user_agent), text(event.request_id), optional(event.leaf_index),
        optional(event.covered_by_head),
    ]


# The authentication log: never a password, a token or a code (none is recorded). The whole event,
# to recompute its leaf, is in the audit export (filter it by the event ids).
AUTH_EXPORT = Export(
    name="auth-events",
    header=("event_id", "created_at", "action", "outcome", "username", "actor", "source_ip", "user_agent",
            "request_id", "leaf_index", "covered_by_head"),
    row=_auth_row,
)
