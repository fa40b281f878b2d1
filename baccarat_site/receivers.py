"""The site's wiring of presentation events into the audit trail."""

from django.conf import settings

from audit.choices import AuditAction
from audit.services import audit_record


def record_locked_out(sender, username: str, address: str | None = None, slowed: bool = False, **kwargs) -> None:
    # The user name and where from: nothing of the passwords tried. The event's source_ip is the
    # address of the attempt that set it off; ``after`` says what was locked.
    if slowed:
        after = {"slowed": "the user name, from addresses it has not logged in from",
                 "check_every_seconds": settings.LOGIN_SLOWDOWN_SECONDS, "failures": settings.LOGIN_SLOWDOWN_AFTER}
    else:
        after = {"locked": "the user name, from this address", "address": address,
                 "seconds": settings.LOGIN_LOCKOUT_SECONDS, "failures": settings.LOGIN_FAILURE_LIMIT}
    audit_record(actor="anonymous", action=AuditAction.LOGIN_LOCKED_OUT, object_type="user",
                 object_id=username[:64], after=after)


def record_unlocked(sender, username: str, by=None, user=None, **kwargs) -> None:
    # An administrator ended the name's lock-outs: a change to the staff user's log-in state.
    subject = {"obj": user} if user is not None else {"object_type": "user", "object_id": username[:64]}
    audit_record(actor=by if by is not None else "system:unlock", action=AuditAction.STAFF_CHANGED,
                 **subject, after={"log_ins": "unlocked", "username": username})
