"""Sessions that end: after STAFF_SESSION_IDLE_MINUTES without a request, STAFF_SESSION_HOURS after
log-in whatever their use, and as soon as their user's password, role, staff status or second factor
changes.

At log-in (``user_logged_in``, after Django's ``login`` has given the session a new key) the session
is stamped with the time, and with a digest of the user's standing: staff and superuser status,
what their groups (their role) grant, and their confirmed second-factor devices. Before each
request of a signed-in session, ``StaffSessionMiddleware`` ends
it (``logout``: the row is deleted, the request goes on anonymous, so the admin sends to its log-in
page and the API answers 401) when it is too old, idle too long, unstamped (made before this rule),
or its user's digest is no longer the one stamped (one query of its own, the devices': the group
permissions are the ones every admin page and API call reads, kept for the request). A change of
role, staff status or second factor thus ends every session of that person without finding the
sessions: each ends at its next request. (A permission granted or withdrawn to the person directly holds at once, since
permissions are read afresh on every request, and leaves the sessions be.) A changed password or a deactivated user is
Django's own check (the session's hash of the password; ``get_user`` refuses an inactive user); a
person changing their own password in the admin keeps the session they changed it from, as Django
does.

A request without a session cookie (an API token's) costs nothing here: the session is not read.
The last request's time is written at most once a ``TOUCH_SECONDS``, not on every page.
"""

import hashlib
import time
from datetime import UTC, datetime

from django.conf import settings
from django.contrib.auth import SESSION_KEY, logout
from django.db.models import Value
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

STARTED = "_staff_session_started"
SEEN = "_staff_session_seen"
GRANTS = "_staff_session_grants"
TOUCH_SECONDS = 60
# Set on a request whose session was ended here ("expired", "idle", "unstamped" or "grants_changed").
ENDED_ATTRIBUTE = "staff_session_ended"
DEVICES_ATTRIBUTE = "_second_factor_devices"  # on the user, for the request


def clock() -> float:
    """Seconds since the epoch (the tests move it forward)."""
    return time.time()


def second_factor_of(user) -> tuple:
    """The persistent ids (django-otp's "otp_totp.totpdevice/12") of the person's confirmed second-factor
    devices: one query, kept on the user for the request. An enrolment or a reset
    (backoffice.second_factor) makes new ones or deletes them; the session's verified device must be one."""
    if not hasattr(user, DEVICES_ATTRIBUTE):
        totp = TOTPDevice.objects.filter(user=user, confirmed=True).values_list(
            Value(TOTPDevice.model_label()), "pk")
        recovery = StaticDevice.objects.filter(user=user, confirmed=True).values_list(
            Value(StaticDevice.model_label()), "pk")
        setattr(user, DEVICES_ATTRIBUTE, tuple(sorted(f"{label}/{pk}" for label, pk in totp.union(recovery, all=True))))
    return getattr(user, DEVICES_ATTRIBUTE)


def grants_of(user) -> str:
    """A digest of the user's standing: staff and superuser status, what the groups (the role)
    grant (ModelBackend keeps them on the user for the rest of the request) and their second factor."""
    granted = ",".join(sorted(user.get_group_permissions()))
    standing = f"{user.is_staff:d}{user.is_superuser:d}|{granted}|{','.join(second_factor_of(user))}"
    return hashlib.sha256(standing.encode()).hexdigest()


def restamp(request) -> None:
    """The session a person changed their own second factor from keeps going (as Django keeps the one
    a password was changed from); their other sessions end."""
    if hasattr(request.user, DEVICES_ATTRIBUTE):
        delattr(request.user, DEVICES_ATTRIBUTE)
    request.session[GRANTS] = grants_of(request.user)


def stamp_session(sender, request, user, **kwargs) -> None:
    """``user_logged_in``: the session's start, last request and grants; its cookie and row expire
    at the end of its absolute lifetime."""
    if request is None or not hasattr(request, "session"):
        return
    now = clock()
    session = request.session
    session[STARTED] = session[SEEN] = now
    session[GRANTS] = grants_of(user)
    session.set_expiry(datetime.fromtimestamp(now + settings.STAFF_SESSION_HOURS * 3600, UTC))


def ended_because(request, session) -> str | None:
    now = clock()
    started, seen = session.get(STARTED), session.get(SEEN)
    if started is None or seen is None:
        return "unstamped"
    if now - started >= settings.STAFF_SESSION_HOURS * 3600:
        return "expired"
    if now - seen >= settings.STAFF_SESSION_IDLE_MINUTES * 60:
        return "idle"
    user = request.user  # Django's checks: the password's hash in the session, an active user
    if user.is_authenticated and session.get(GRANTS) != grants_of(user):
        return "grants_changed"
    return None


class StaffSessionMiddleware:
    """After AuthenticationMiddleware: ends a session past its limits before any view sees it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        session = getattr(request, "session", None)
        if session is not None and SESSION_KEY in session:
            reason = ended_because(request, session)
            if reason is not None:
                setattr(request, ENDED_ATTRIBUTE, reason)
                logout(request)
            elif SEEN in session and clock() - session[SEEN] >= TOUCH_SECONDS:  # not flushed by Django's checks
                session[SEEN] = clock()
        return self.get_response(request)
