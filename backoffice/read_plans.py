"""Reads planned for their own values.

Statements are prepared once run a few times on a connection (docs/decisions/0005-prepared-
statements.md), and PostgreSQL may then plan them once for any values. That suits a bet's writes
and a lookup by key; it does not suit the back office's lists, whose filters are skewed (an audit
action, a ledger kind) or bounded by values a generic plan cannot see. So the view of a safe request
(GET, HEAD, OPTIONS) runs no statement prepared (``dbutils.plans.unprepared``), unless its view says
that its reads are lookups by key that gain from preparing (``prepared_reads``: a game server's
reads of its game, a round, a bet or an account, each a ``KeyLookupView``). An unsafe request
passes straight through. The middleware stands last, so that the
session and the user are read as before; a streaming response's body, read after the view, runs
as it would without it.
"""

from contextlib import ExitStack

from rest_framework.permissions import SAFE_METHODS

from dbutils.plans import unprepared


class ReadsPlannedForTheirValuesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method not in SAFE_METHODS:
            return self.get_response(request)
        with ExitStack() as request.read_plans:  # entered by process_view, left with the response
            return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.method in SAFE_METHODS and not reads_prepared(view_func):
            request.read_plans.enter_context(unprepared())


def reads_prepared(view_func) -> bool:
    """Whether the view's reads run prepared: a class-based view's ``prepared_reads``."""
    return bool(getattr(getattr(view_func, "view_class", view_func), "prepared_reads", False))
