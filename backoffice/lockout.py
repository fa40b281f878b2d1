"""Lock-outs after repeated failed log-ins: per user name and source address, and a slow-down per
user name that never locks its owner out.

Each failed log-in (Django's ``user_login_failed``) counts, in the cache (shared by every web
process when ``CACHE_URL`` names Redis), against the user name tried from the client's address
(``backoffice.addresses``: behind ``TRUSTED_PROXIES``, the address the proxies were reached from;
an IPv6 address's /64), and against the name from anywhere.

- After ``LOGIN_FAILURE_LIMIT`` failures of a name from one address within ``LOGIN_LOCKOUT_SECONDS``,
  the name is locked from that address for that long: ``LockoutBackend`` (Django's model backend
  behind a check) refuses it there before any password is checked. From another address the name
  is not locked, so a guesser cannot lock an administrator out.
- After ``LOGIN_SLOWDOWN_AFTER`` failures of a name from all addresses within that time (a guesser
  rotating addresses), the name is slowed, not locked: from an address it has not logged in from
  (within ``LOGIN_KNOWN_ADDRESS_DAYS``), its password is checked at most once every
  ``LOGIN_SLOWDOWN_SECONDS`` and other attempts are refused unchecked; from an address it has
  logged in from, as usual. Every further failure keeps the slow-down going.
- Each attempt from an address is counted before its password is checked (atomically in the cache),
  so attempts sent at once are held to the same limit as attempts sent one by one.
- An attempt refused unchecked does not count. ``login_locked_out`` is sent once for each lock-out
  and each slow-down (the site records it in the audit trail: the user name and the address, never
  a password). A successful log-in clears its address's count and remembers the address.
- ``unlock(username)`` (the "Unlock log-ins" action on users, for administrators) ends every
  lock-out and the slow-down of the name at once, and sends ``login_unlocked`` (audited).
- Wrong second-factor codes (backoffice.second_factor) count per person, from every address: after
  ``LOGIN_FAILURE_LIMIT`` of them within ``LOGIN_LOCKOUT_SECONDS`` no code is checked for that long
  (``unlock`` ends this too). Each code is counted before it is checked (a right one clears the
  count), so codes sent at once get no more checks than codes sent one by one.
"""

import hashlib
import secrets

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.dispatch import Signal

from backoffice.addresses import client_address, limited_address

login_locked_out = Signal()  # sent with username=, address= (None: the name from every address), slowed=
login_unlocked = Signal()  # sent with username=, by= (the administrator), user= (the user unlocked, if known)

LOCKED, SLOWED = "locked", "slowed"
REFUSED_ATTRIBUTE = "login_refused"  # set on the request whose log-in was refused unchecked
ATTEMPT_ATTRIBUTE = "login_attempt"  # its number from its address, counted before its password is checked
NO_ADDRESS = "-"


def _digest(username: str) -> str:
    return hashlib.sha256(str(username).strip().casefold().encode("utf-8", "replace")).hexdigest()


class _Keys:
    """The cache keys of a user name tried from an address. Every count of the name is under its
    generation, which ``unlock`` replaces: all of them end at once, whatever the addresses."""

    def __init__(self, username: str, address: str | None):
        digest = _digest(username)
        generation = cache.get(f"login-generation:{digest}", "0")
        self.address = address or NO_ADDRESS
        self.name = f"login-failures:{digest}:{generation}"
        self.pair = f"{self.name}:{self.address}"
        self.slot = f"login-slot:{digest}:{generation}"
        self.known = f"login-known:{digest}:{self.address}"
        self.codes = f"second-factor-failures:{digest}:{generation}"


def _address(request) -> str | None:
    """The client's address as a limit counts it (an IPv6 address's /64)."""
    return limited_address(client_address(request)) if request is not None else None


def _count(key: str) -> int:
    cache.add(key, 0, timeout=settings.LOGIN_LOCKOUT_SECONDS)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=settings.LOGIN_LOCKOUT_SECONDS)
        return 1


def failures(username: str, address: str | None = None) -> int:
    """Failures of the name from the address (an IPv6 one's /64) within the lock-out time."""
    return cache.get(_Keys(username, limited_address(address)).pair, 0)


def is_locked(username: str, address: str | None = None) -> bool:
    """Whether the name is locked from the address."""
    return failures(username, address) >= settings.LOGIN_FAILURE_LIMIT


def is_slowed(username: str) -> bool:
    """Whether the name, tried from everywhere, is slowed down."""
    return 0 < settings.LOGIN_SLOWDOWN_AFTER <= cache.get(_Keys(username, None).name, 0)


def refusal(username: str, request=None) -> str | None:
    """LOCKED or SLOWED when this attempt's password is not to be checked, else None (while the
    name is slowed, this takes its one check of the next LOGIN_SLOWDOWN_SECONDS)."""
    keys = _Keys(username, _address(request))
    held = cache.get_many([keys.pair, keys.name, keys.known])
    if held.get(keys.pair, 0) >= settings.LOGIN_FAILURE_LIMIT:
        return LOCKED
    slowed = 0 < settings.LOGIN_SLOWDOWN_AFTER <= held.get(keys.name, 0)
    if slowed and not held.get(keys.known) and not cache.add(keys.slot, 1, timeout=settings.LOGIN_SLOWDOWN_SECONDS):
        return SLOWED
    if request is not None:
        # Counted before the password is checked, in one atomic step: log-ins sent at once from one
        # address get no more checks than LOGIN_FAILURE_LIMIT (a right password clears the count).
        attempt = _count(keys.pair)
        if attempt > settings.LOGIN_FAILURE_LIMIT:
            return LOCKED
        setattr(request, ATTEMPT_ATTRIBUTE, attempt)
    return None


def record_failure(sender, credentials, request=None, **kwargs) -> None:
    if getattr(request, REFUSED_ATTRIBUTE, None):
        return  # refused unchecked: nothing was guessed
    username = str(credentials.get("username") or "")
    keys = _Keys(username, _address(request))
    attempt = request.__dict__.pop(ATTEMPT_ATTRIBUTE, None) if request is not None else None
    if (attempt or _count(keys.pair)) == settings.LOGIN_FAILURE_LIMIT:
        cache.touch(keys.pair, settings.LOGIN_LOCKOUT_SECONDS)  # the lock-out lasts its full time from now
        login_locked_out.send(sender=LockoutBackend, username=username, address=keys.address, slowed=False)
    if settings.LOGIN_SLOWDOWN_AFTER > 0:
        name_failures = _count(keys.name)
        if name_failures >= settings.LOGIN_SLOWDOWN_AFTER:
            cache.touch(keys.name, settings.LOGIN_LOCKOUT_SECONDS)  # slowed as long as the failures go on
        if name_failures == settings.LOGIN_SLOWDOWN_AFTER:
            login_locked_out.send(sender=LockoutBackend, username=username, address=None, slowed=True)


def clear_failures(sender, user, request=None, **kwargs) -> None:
    keys = _Keys(user.get_username(), _address(request))
    cache.delete(keys.pair)
    if request is not None:
        cache.set(keys.known, 1, timeout=settings.LOGIN_KNOWN_ADDRESS_DAYS * 86400)


def unlock(username: str, by=None, user=None) -> None:
    """End every lock-out and the slow-down of the name (an administrator, ``by``, unlocking ``user``)."""
    cache.set(f"login-generation:{_digest(username)}", secrets.token_hex(8), timeout=None)
    login_unlocked.send(sender=LockoutBackend, username=username, by=by, user=user)


def second_factor_locked(username: str) -> bool:
    """Whether the person's second factor is locked: LOGIN_FAILURE_LIMIT wrong codes (from anywhere:
    whoever enters them already holds the password) within LOGIN_LOCKOUT_SECONDS."""
    return cache.get(_Keys(username, None).codes, 0) >= settings.LOGIN_FAILURE_LIMIT


def second_factor_attempt(username: str) -> int:
    """Count a code about to be checked: its number among the person's codes since the last right one
    (within LOGIN_LOCKOUT_SECONDS). Counted before the check, in one atomic step, so that codes sent
    at once cannot all be checked before the first wrong one counts: beyond LOGIN_FAILURE_LIMIT none is."""
    return _count(_Keys(username, None).codes)


def second_factor_failed(username: str, attempt: int) -> bool:
    """Attempt number ``attempt`` was a wrong code: True when it is the one that locks the second
    factor (which then lasts its full time from now)."""
    if attempt != settings.LOGIN_FAILURE_LIMIT:
        return False
    cache.touch(_Keys(username, None).codes, settings.LOGIN_LOCKOUT_SECONDS)
    return True


def clear_second_factor_failures(username: str) -> None:
    cache.delete(_Keys(username, None).codes)


class LockoutBackend(ModelBackend):
    """Django's user and password backend, refusing a locked user name before any password is
    checked (PermissionDenied stops ``authenticate``, which then reports the failure)."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        reason = refusal(username, request) if username is not None else None
        if reason:
            if request is not None:
                setattr(request, REFUSED_ATTRIBUTE, reason)
            raise PermissionDenied
        return super().authenticate(request, username=username, password=password, **kwargs)


LOCKED_MESSAGE = ("Too many failed log-ins for this user name from here: it is locked here for {minutes} minutes. "
                  "An administrator can unlock it.")
SLOWED_MESSAGE = ("Too many failed log-ins for this user name: it may be tried once every {seconds} seconds "
                  "from a new place. Try again in a moment.")
