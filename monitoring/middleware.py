"""/-/alive, /-/ready and /metrics, answered before the rest of the stack; and the HTTP metrics.

``ProbeMiddleware`` comes right after the client's address is known, before the HTTPS redirect, the
host check (ALLOWED_HOSTS) and the sessions: a load balancer or an orchestrator probes over plain
HTTP by the instance's address (Host: 10.0.3.7:8000), and a probe must not need a cookie or touch the
session table. Only GET and HEAD are answered (405 otherwise).

``RequestMetricsMiddleware`` times every other request and counts its database queries, labelled by
the view that answered (its URL name, e.g. ``api:round-bets``; ``unmatched`` for a 404 no route
took), the method and the status, kept in memory and written in batches (monitoring.batching). The
statements are counted by one execute wrapper installed on each connection as it connects, rather
than one added to and removed from every connection around each request. With METRICS_ENABLED off
it removes itself (MiddlewareNotUsed).
"""

import hmac
import ipaddress
import json
import threading
import time
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, MiddlewareNotUsed
from django.db import connections
from django.db.backends.signals import connection_created
from django.http import HttpResponse, HttpResponseNotAllowed

from backoffice.addresses import client_address, parse_address

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
NO_STORE = {"Cache-Control": "no-store"}


def alive(request) -> HttpResponse:
    """The process answers: no database, broker or cache is asked."""
    return HttpResponse(b'{"status": "alive"}', content_type="application/json", headers=NO_STORE)


def ready(request) -> HttpResponse:
    from monitoring.readiness import readiness

    is_ready, body = readiness()
    return HttpResponse(json.dumps(body), status=200 if is_ready else 503, content_type="application/json",
                        headers=NO_STORE)


@lru_cache(maxsize=4)
def allowed_networks(addresses: tuple) -> tuple:
    try:
        return tuple(ipaddress.ip_network(address, strict=False) for address in addresses)
    except ValueError as error:
        raise ImproperlyConfigured(f"METRICS_ALLOWED_IPS: {error}") from None


def metrics_allowed(request) -> bool:
    """A request with ``Authorization: Bearer <METRICS_TOKEN>``, or from an address of METRICS_ALLOWED_IPS
    (the client's address: behind TRUSTED_PROXIES, the one they forwarded)."""
    token = settings.METRICS_TOKEN
    scheme, _, presented = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if token and scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode(), token.encode()):
        return True
    address = parse_address(client_address(request))
    return address is not None and any(address.version == network.version and address in network
                                       for network in allowed_networks(tuple(settings.METRICS_ALLOWED_IPS)))


def metrics(request) -> HttpResponse:
    if not metrics_allowed(request):
        return HttpResponse(b"Metrics need a bearer token or an allowed address.\n", status=401,
                            content_type="text/plain", headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
    from monitoring.exposition import exposition

    body, content_type = exposition()
    return HttpResponse(body, content_type=content_type, headers=NO_STORE)


class ProbeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.answers = {"/-/alive": alive, "/-/ready": ready}
        if settings.METRICS_ENABLED:
            self.answers["/metrics"] = metrics
            allowed_networks(tuple(settings.METRICS_ALLOWED_IPS))  # a value that is not an address stops the start

    def __call__(self, request):
        answer = self.answers.get(request.path_info)
        if answer is None:
            return self.get_response(request)
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        return answer(request)


class QueryCounter(threading.local):
    """A database execute wrapper that counts the statements each thread runs; installed once on
    every connection of the web process (``count_queries_on``), read before and after a request."""

    count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


QUERIES = QueryCounter()


def count_queries_on(connection, **kwargs) -> None:
    """On a connection as it connects (``connection_created``): its statements counted from then on."""
    if QUERIES not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, QUERIES)


class RequestMetricsMiddleware:
    def __init__(self, get_response):
        if not settings.METRICS_ENABLED:
            raise MiddlewareNotUsed
        from monitoring import metrics

        self.get_response = get_response
        self.pending, self.latency, self.queries = metrics.PENDING, metrics.HTTP_LATENCY, metrics.HTTP_QUERIES
        connection_created.connect(count_queries_on, dispatch_uid="monitoring.count_queries")
        for alias in connections:  # this thread's connections, made before (the primary, any replica)
            count_queries_on(connections[alias])

    def __call__(self, request):
        queries = QUERIES.count
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        queries = QUERIES.count - queries
        match = request.resolver_match
        view = match.view_name if match is not None else "unmatched"
        method = request.method if request.method in METHODS else "other"
        # The status as a number: prometheus_client makes every label value a string when it is written.
        self.pending.observe(self.latency, (view, method, response.status_code), elapsed)
        self.pending.observe(self.queries, (view, method), queries)
        return response
