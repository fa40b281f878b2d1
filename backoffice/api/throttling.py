"""API throttling per token, at a rate per role (settings.API_THROTTLE_RATES).

A fixed window counted in the cache: one increment per request, whatever the rate, so that a
game server's thousands of requests per second cost a counter each (one round trip to Redis), not
a list of timestamps as DRF's own throttles keep. The role comes from the user's permissions, which the permission check
has already read (no query). Anonymous requests count by address.
Over the rate, DRF answers 429 with Retry-After (the seconds left in the window).
"""

import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

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


def _count(key: str, period: int) -> int:
    """This request's number in its window: one cache round trip once the window has begun."""
    try:
        return cache.incr(key)
    except ValueError:  # the window's first request, unless another one began it just now
        if cache.add(key, 1, timeout=period + 1):
            return 1
    try:
        return cache.incr(key)
    except ValueError:  # ... and that window's counter expired since
        cache.set(key, 1, timeout=period + 1)
        return 1


class RoleRateThrottle(BaseThrottle):
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
        hits = _count(f"throttle:{ident}:{period}:{int(now // period)}", period)
        self.retry_after = period - (now % period)
        return hits <= limit

    def wait(self) -> float:
        return max(1, round(self.retry_after))
