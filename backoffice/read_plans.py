"""Reads planned for their own values.

Statements are prepared once run a few times on a connection (docs/decisions/0005-prepared-
statements.md), and PostgreSQL may then plan them once for any values. That suits a bet's writes
and a lookup by key; it does not suit the back office's lists, whose filters are skewed (an audit
action, a ledger kind) or bounded by values a generic plan cannot see. So a safe request (GET, HEAD,
OPTIONS) runs its view with no statement prepared (``dbutils.plans.unprepared``), unless its view
says that its reads are lookups by key that gain from preparing (``prepared_reads = True``: a game
server's reads of its game, round or bet). The middleware stands last, so that the session and the
user are read as before; a streaming response's body, read after the view, runs as prepared.
"""

from django.urls import Resolver404, resolve

from backoffice.replica_reads import SAFE_METHODS
from dbutils.plans import unprepared


class ReadsPlannedForTheirValuesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method not in SAFE_METHODS or _reads_prepared(request.path_info):
            return self.get_response(request)
        with unprepared():
            return self.get_response(request)


def _reads_prepared(path: str) -> bool:
    try:
        view = resolve(path).func
    except Resolver404:
        return False
    return bool(getattr(getattr(view, "view_class", view), "prepared_reads", False))
