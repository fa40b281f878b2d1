import logging
import time
import uuid

from django.conf import settings

from audit.context import REQUEST_ID, request_context
from backoffice.addresses import client_address

logger = logging.getLogger(__name__)


class AuditRequestMiddleware:
    """Gives every request an id (the caller's X-Request-ID when well-formed) and its client's address,
    so the audit events and log lines a request causes can name both. The id is echoed in the
    response; with LOG_REQUESTS, one log line per request says how it went (no query string: a
    verification link carries seeds)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get("X-Request-ID", "")
        request_id = given if REQUEST_ID.match(given) else uuid.uuid4().hex
        request.request_id = request_id
        started = time.perf_counter()
        # The client's address as backoffice.addresses computed it (behind TRUSTED_PROXIES, not the proxy's).
        with request_context(request_id, client_address(request), getattr(request, "user", None),
                             user_agent=request.META.get("HTTP_USER_AGENT", ""), request=request):
            response = self.get_response(request)
            if settings.LOG_REQUESTS:
                duration = round((time.perf_counter() - started) * 1000, 1)
                logger.info("%s %s %s", request.method, request.path, response.status_code, extra={
                    "method": request.method, "path": request.path, "status": response.status_code,
                    "duration_ms": duration})
        response["X-Request-ID"] = request_id
        return response
