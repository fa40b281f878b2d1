import re
import uuid

from audit.context import request_context
from backoffice.addresses import client_address

_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class AuditRequestMiddleware:
    """Gives every request an id (the caller's X-Request-ID when well-formed) and its client's address,
    so the audit events a request causes can name both. The id is echoed in the response."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get("X-Request-ID", "")
        request_id = given if _REQUEST_ID_RE.match(given) else uuid.uuid4().hex
        request.request_id = request_id
        # The client's address as backoffice.addresses computed it (behind TRUSTED_PROXIES, not the proxy's).
        with request_context(request_id, client_address(request), getattr(request, "user", None),
                             user_agent=request.META.get("HTTP_USER_AGENT", "")):
            response = self.get_response(request)
        response["X-Request-ID"] = request_id
        return response
