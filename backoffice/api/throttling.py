"""API throttling per token, at a rate per role (settings.API_THROTTLE_RATES).

A fixed window counted in the cache (Redis in production, shared by every process), not a list of
timestamps as DRF's own throttles keep. A rate of fewer than API_THROTTLE_BATCH_FROM requests a
window (a person's, an address's) is counted exactly: one increment per request. A larger one (a
game server's, a runaway guard of thousands a second) is counted in batches: each process counts
its requests itself and adds them to the shared counter API_THROTTLE_BATCH at a time, so that a
round trip is paid once a batch, not on every bet; the requests that pass may then exceed the
limit by at most a batch per process, a sliver of such a rate.
The role comes from the user's permissions, which the permission check has already read (no
query). Anonymous requests count by the client's address (backoffice.addresses: X-Forwarded-For
only from TRUSTED_PROXIES). Over the rate, DRF answers 429 with Retry-After (the
seconds left in the window).
"""

import threading
import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from backoffice.addresses import client_address, limited_address
from backoffice.roles import ROLE_PERMISSIONS, STAFF_ROLES, Role

PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """"600/minute" -> (600, 60); None or "none" -> None (no limit)."""
    if rate is None or str(rate).strip().lower() in ("", "none"):
        return None
    count, period = str(rate).split("/")
    return int(count), PERIODS[period.strip().lower()]


def role_of(user) -> str:
    """The role a token is rated as, from what the user may do (no query: the permission check
    before the throttle has cached the user's permissions).

    Integration clients are the only role without staff status. A member of staff is rated as an
    administrator when superuser or holding every permission of every role, else as the most
    specific of the roles whose permissions they hold (an operator holds every support permission).
    """
    if not user.is_staff:
        return Role.INTEGRATION.value
    held = user.get_all_permissions()
    every_role = {code for codes in ROLE_PERMISSIONS.values() if codes for code in codes}
    if user.is_superuser or every_role <= held:
        return Role.ADMIN.value
    roles = [role for role in STAFF_ROLES if ROLE_PERMISSIONS[role] and set(ROLE_PERMISSIONS[role]) <= held]
    return max(roles, key=lambda role: len(ROLE_PERMISSIONS[role]), default=Role.SUPPORT).value


def _add(key: str, hits: int, period: int) -> int:
    """Add ``hits`` to the window's shared counter and answer its total: one cache round trip once
    the window has begun."""
    try:
        return cache.incr(key, hits)
    except ValueError:  # the window's first requests, unless another process began it just now
        if cache.add(key, hits, timeout=period + 1):
            return hits
    try:
        return cache.incr(key, hits)
    except ValueError:  # ... and that window's counter expired since
        cache.set(key, hits, timeout=period + 1)
        return hits


class _Batches:
    """This process's requests not yet added to the shared counters, and the shared totals last
    read, by token or address: {ident: (window key, pending, shared)}. Only the current window of
    each is kept."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts = {}

    def count(self, ident: str, key: str, period: int, batch: int) -> int:
        """This request's number in its window, as far as this process knows."""
        with self._lock:
            window, pending, shared = self._counts.get(ident, (None, 0, 0))
            if window == key and pending + 1 < batch:
                self._counts[ident] = (key, pending + 1, shared)
                return shared + pending + 1
            # A full batch, or a new window's first request: add them and read the shared total.
            shared = _add(key, pending + 1 if window == key else 1, period)
            self._counts[ident] = (key, 0, shared)
            return shared

    def clear(self) -> None:
        with self._lock:
            self._counts.clear()


batches = _Batches()


def _count(ident: str, key: str, limit: int, period: int) -> int:
    if limit >= settings.API_THROTTLE_BATCH_FROM and settings.API_THROTTLE_BATCH > 1:
        return batches.count(ident, key, period, settings.API_THROTTLE_BATCH)
    return _add(key, 1, period)


class RoleRateThrottle(BaseThrottle):
    def get_ident(self, request) -> str:
        """The client's address (backoffice.addresses; an IPv6 one's /64), not DRF's reading of
        X-Forwarded-For as sent."""
        return limited_address(client_address(request)) or "unknown"

    def allow_request(self, request, view) -> bool:
        user = request.user
        if user and user.is_authenticated:
            scope, ident = role_of(user), f"user:{user.pk}"
        else:
            scope, ident = "anonymous", f"address:{self.get_ident(request)}"
        rate = parse_rate(settings.API_THROTTLE_RATES.get(scope))
        if rate is None:
            return True
        limit, period = rate
        now = time.time()
        hits = _count(ident, f"throttle:{ident}:{period}:{int(now // period)}", limit, period)
        self.retry_after = period - (now % period)
        return hits <= limit

    def wait(self) -> float:
        return max(1, round(self.retry_after))
