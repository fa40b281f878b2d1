"""API throttling per token, at a rate per role (settings.API_THROTTLE_RATES).

A fixed window counted in the cache: one increment per request, whatever the rate, so that a
game server's thousands of requests per second cost a counter each, not a list of timestamps as
DRF's own throttles keep. Integration clients (the only role without staff status) are rated
without a query; people's roles come from their groups. Anonymous requests count by address.
Over the rate, DRF answers 429 with Retry-After (the seconds left in the window).
"""

import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from backoffice.roles import Role

PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """"600/minute" -> (600, 60); None or "none" -> None (no limit)."""
    if rate is None or str(rate).strip().lower() in ("", "none"):
        return None
    count, period = str(rate).split("/")
    return int(count), PERIODS[period.strip().lower()]


def role_of(user) -> str:
    if not user.is_staff:
        return Role.INTEGRATION.value
    if user.is_superuser:
        return Role.ADMIN.value
    names = {role.group_name: role.value for role in Role}
    roles = [names[name] for name in user.groups.values_list("name", flat=True) if name in names]
    rates = settings.API_THROTTLE_RATES
    # A member of several roles gets the most generous of their rates.
    return max(roles, key=lambda role: _per_second(rates.get(role)), default=Role.SUPPORT.value)


def _per_second(rate) -> float:
    parsed = parse_rate(rate)
    return float("inf") if parsed is None else parsed[0] / parsed[1]


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
        key = f"throttle:{ident}:{period}:{int(now // period)}"
        cache.add(key, 0, timeout=period + 1)
        try:
            hits = cache.incr(key)
        except ValueError:  # the window's counter expired between add and incr
            cache.set(key, 1, timeout=period + 1)
            hits = 1
        self.retry_after = period - (now % period)
        return hits <= limit

    def wait(self) -> float:
        return max(1, round(self.retry_after))
