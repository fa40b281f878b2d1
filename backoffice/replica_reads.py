"""Which database a page or an API read of a request uses: a replica, or the primary.

The presentation layer asks ``read_alias(request)`` and passes it to the selectors (``using=``):
lists, details, reports, exports, round recall and the public pages. The answer is the primary
("default") unless replicas are configured and all of these hold:

- the request is a safe one (GET, HEAD, OPTIONS): what a POST reads decides what it writes;
- no transaction is open: a read inside a write transaction sees that transaction;
- its person has not written within REPLICA_READ_YOUR_WRITES_SECONDS (read-your-writes: a signed
  cookie for a browser, a mark in the cache for the user, which tokens carry);
- a replica answers and is at most REPLICA_MAX_LAG_SECONDS behind (dbutils.replicas).

Money paths, approvals and the audit sequencer read through services on the primary and never ask.
``RecentWriteMiddleware`` sets both marks after every non-safe request that succeeded.
"""

import math
import time

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from rest_framework.permissions import SAFE_METHODS

from dbutils import replicas

COOKIE = "recent_write"
_SALT = "backoffice.replica_reads"
_MARK_LIMIT = 10_000
# user id -> monotonic time this process last set the user's mark (see mark_write)
_marked: dict[int, float] = {}


def _mark_key(user_id) -> str:
    return f"replica-reads:recent-write:{user_id}"


def wrote_recently(request) -> bool:
    window = settings.REPLICA_READ_YOUR_WRITES_SECONDS
    if request.get_signed_cookie(COOKIE, default=None, salt=_SALT, max_age=window) is not None:
        return True
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated and cache.get(_mark_key(user.pk)))


def mark_write(user_id) -> None:
    """The user reads the primary for at least REPLICA_READ_YOUR_WRITES_SECONDS from now. The mark lives
    twice that long and is set again once that long has passed, so a stream of writes (a game server's
    bets) costs a cache write per window, not per request."""
    window = settings.REPLICA_READ_YOUR_WRITES_SECONDS
    now = time.monotonic()
    if now - _marked.get(user_id, -window) < window:
        return
    cache.set(_mark_key(user_id), 1, timeout=2 * window)
    if len(_marked) >= _MARK_LIMIT:
        _marked.clear()
    _marked[user_id] = now


def forget_marks() -> None:
    """This process sets every mark afresh (tests that empty the cache)."""
    _marked.clear()


def _choose(request) -> replicas.Health | None:
    if not replicas.aliases() or request.method not in SAFE_METHODS:
        return None
    if connections[DEFAULT_DB_ALIAS].in_atomic_block or wrote_recently(request):
        return None
    return replicas.usable_replica()


def read_replica(request) -> replicas.Health | None:
    """The replica this request's reads use (its alias and lag), or None for the primary. Decided once
    per request, after authentication (a token's user is known only then)."""
    request = getattr(request, "_request", request)  # DRF's Request: the Django request it wraps
    if not hasattr(request, "_replica_read"):
        request._replica_read = _choose(request)
    return request._replica_read


def read_alias(request) -> str:
    chosen = read_replica(request)
    return DEFAULT_DB_ALIAS if chosen is None else chosen.alias


def data_age_seconds(request) -> float | None:
    """How old the data of this request's pages may be: the replica's lag, None when read live."""
    chosen = read_replica(request)
    return None if chosen is None else chosen.lag


class RecentWriteMiddleware:
    """After a non-safe request that succeeded, its person reads the primary for a while: a signed
    cookie for a browser, a cache mark for the user (what a token's requests carry)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.method in SAFE_METHODS or response.status_code >= 400 or not replicas.aliases():
            return response
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            mark_write(user.pk)
        if "HTTP_AUTHORIZATION" not in request.META:  # a browser: a token's client keeps no cookie
            response.set_signed_cookie(COOKIE, "1", salt=_SALT, httponly=True, samesite="Lax",
                                       max_age=math.ceil(settings.REPLICA_READ_YOUR_WRITES_SECONDS),
                                       secure=settings.SESSION_COOKIE_SECURE)
        return response
