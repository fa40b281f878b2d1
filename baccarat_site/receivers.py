"""The site's wiring of presentation events into the audit trail."""

from audit.choices import AuditAction
from audit.services import audit_record


def record_locked_out(sender, username: str, **kwargs) -> None:
    # The user name only: nothing of the passwords tried.
    audit_record(actor="anonymous", action=AuditAction.LOGIN_LOCKED_OUT, object_type="user",
                 object_id=username[:64])
