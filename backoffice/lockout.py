"""Lock-out after repeated failed log-ins, by user name.

Each failed log-in (Django's ``user_login_failed``) counts against the user name tried, in the
cache (shared by every web process when ``CACHE_URL`` names Redis). After
``LOGIN_FAILURE_LIMIT`` failures within ``LOGIN_LOCKOUT_SECONDS``, the name is locked for that
long: ``LockoutBackend`` (Django's model backend behind a check) refuses it before any password
is checked, so guessing goes no further, and ``login_locked_out`` is sent once (the site records
it in the audit trail, with the user name only). A successful log-in clears the count.

Locking the name rather than the source address is the operator's choice: a password guesser
who rotates addresses must not get more tries, and a locked-out member of staff is a phone call
away from an administrator.
"""

import hashlib

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.dispatch import Signal

login_locked_out = Signal()  # sent with username=


def _key(username: str) -> str:
    digest = hashlib.sha256(username.strip().casefold().encode("utf-8", "replace")).hexdigest()
    return f"login-failures:{digest}"


def failures(username: str) -> int:
    return cache.get(_key(username), 0)


def is_locked(username: str) -> bool:
    return failures(username) >= settings.LOGIN_FAILURE_LIMIT


def record_failure(sender, credentials, request=None, **kwargs) -> None:
    username = str(credentials.get("username") or "")
    key = _key(username)
    cache.add(key, 0, timeout=settings.LOGIN_LOCKOUT_SECONDS)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=settings.LOGIN_LOCKOUT_SECONDS)
        count = 1
    if count == settings.LOGIN_FAILURE_LIMIT:
        cache.touch(key, settings.LOGIN_LOCKOUT_SECONDS)  # the lock-out lasts its full time from now
        login_locked_out.send(sender=LockoutBackend, username=username)


def clear_failures(sender, user, request=None, **kwargs) -> None:
    cache.delete(_key(user.get_username()))


class LockoutBackend(ModelBackend):
    """Django's user and password backend, refusing a locked user name before any password is
    checked (PermissionDenied stops ``authenticate``, which then reports the failure)."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is not None and is_locked(username):
            raise PermissionDenied
        return super().authenticate(request, username=username, password=password, **kwargs)


LOCKED_MESSAGE = ("Too many failed log-ins for this user name: it is locked for {minutes} minutes. "
                  "An administrator can tell you more.")
