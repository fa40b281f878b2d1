import re
import uuid

from audit.context import request_context

_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class AuditRequestMiddleware:
    """Gives every request an id (the caller's X-Request-ID when well-formed) and its source IP,
    so the audit events a request causes can name both. The id is echoed in the response."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get("X-Request-ID", "")
        request_id = given if _REQUEST_ID_RE.match(given) else uuid.uuid4().hex
        request.request_id = request_id
        with request_context(request_id, request.META.get("REMOTE_ADDR") or None, getattr(request, "user", None)):
            response = self.get_response(request)
        response["X-Request-ID"] = request_id
        return response
