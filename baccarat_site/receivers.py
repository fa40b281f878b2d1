"""The site's wiring of presentation events into the audit trail, and the authentication log:
log-ins (Django's signals, with what the lock-outs decided), lock-outs and refused API tokens
(signals of backoffice). Never a password, a token or a code: only the user name, the outcome, the
address (``source_ip``) and the user agent."""

import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache

from audit.choices import AuditAction, AuthOutcome
from audit.services import audit_record, auth_event_record
from backoffice import lockout
from backoffice.addresses import client_address, limited_address

NOT_RECORDED = "further failures from this address are not recorded until the minute ends"


def clock() -> float:
    """Seconds since the epoch (the tests hold it still)."""
    return time.time()


def _recorded(request) -> dict | None:
    """The details of a failure's event, or None when it is not recorded: past
    AUTH_LOG_FAILURES_PER_MINUTE failed log-ins and refused tokens from one address (an IPv6 one's
    /64) within a minute, a flood from there writes no more events (the one at the limit says so)."""
    limit = settings.AUTH_LOG_FAILURES_PER_MINUTE
    if limit <= 0 or request is None:
        return {}
    key = f"auth-log:{limited_address(client_address(request)) or '-'}:{int(clock() // 60)}"
    cache.add(key, 0, timeout=61)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=61)
        count = 1
    if count > limit:
        return None
    return {"not_recorded": NOT_RECORDED} if count == limit else {}


def record_logged_in(sender, user, request=None, **kwargs) -> None:
    auth_event_record(actor=user, action=AuditAction.LOGGED_IN, outcome=AuthOutcome.SUCCEEDED,
                      username=user.get_username())


def _failure_outcome(username: str, request) -> str:
    refused = getattr(request, lockout.REFUSED_ATTRIBUTE, None)
    if refused is not None:
        return AuthOutcome.REFUSED_SLOWED if refused == lockout.SLOWED else AuthOutcome.REFUSED_LOCKED
    User = get_user_model()
    active = User._default_manager.filter(**{User.USERNAME_FIELD: username}).values_list("is_active", flat=True)
    active = active.first()
    if active is None:
        return AuthOutcome.UNKNOWN_USER
    return AuthOutcome.WRONG_PASSWORD if active else AuthOutcome.INACTIVE_USER


def record_login_failed(sender, credentials, request=None, **kwargs) -> None:
    # Only the user name: the password never goes anywhere.
    details = _recorded(request)
    if details is None:
        return
    username = str(credentials.get("username") or "")
    auth_event_record(action=AuditAction.LOGIN_FAILED, outcome=_failure_outcome(username, request),
                      username=username, details=details)


def record_staff_login_refused(sender, request, user, **kwargs) -> None:
    # The right password of a user who may not use the admin (no log-in: Django sends no signal).
    details = _recorded(request)
    if details is not None:
        auth_event_record(action=AuditAction.LOGIN_FAILED, outcome=AuthOutcome.NOT_STAFF,
                          username=user.get_username(), details=details)


def record_token_refused(sender, request, outcome: str, username: str = "", token_id=None, **kwargs) -> None:
    # Why, whose and which (the owner's name and the token's id, when known), from where and with
    # which agent: never the token nor any part of it.
    details = _recorded(request)
    if details is not None:
        if token_id is not None:
            details = {**details, "token_id": token_id}
        auth_event_record(action=AuditAction.TOKEN_REFUSED, outcome=outcome, username=username, details=details)


def record_locked_out(sender, username: str, address: str | None = None, slowed: bool = False, **kwargs) -> None:
    # The user name and where from: nothing of the passwords tried. The event's source_ip is the
    # address of the attempt that set it off; ``after`` says what was locked.
    if slowed:
        after = {"slowed": "the user name, from addresses it has not logged in from",
                 "check_every_seconds": settings.LOGIN_SLOWDOWN_SECONDS, "failures": settings.LOGIN_SLOWDOWN_AFTER}
    else:
        after = {"locked": "the user name, from this address", "address": address,
                 "seconds": settings.LOGIN_LOCKOUT_SECONDS, "failures": settings.LOGIN_FAILURE_LIMIT}
    auth_event_record(action=AuditAction.LOGIN_LOCKED_OUT, outcome=AuthOutcome.SLOWED if slowed else
                      AuthOutcome.LOCKED_OUT, username=username, details=after)


def record_unlocked(sender, username: str, by=None, user=None, **kwargs) -> None:
    # An administrator ended the name's lock-outs: a change to the staff user's log-in state.
    subject = {"obj": user} if user is not None else {"object_type": "user", "object_id": username[:64]}
    audit_record(actor=by if by is not None else "system:unlock", action=AuditAction.STAFF_CHANGED,
                 **subject, after={"log_ins": "unlocked", "username": username})
