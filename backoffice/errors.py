"""Error responses: JSON for everything under /api/, a styled HTML page everywhere else.

Django's own handlers (400, 403, 404, 500) and the request guard (backoffice.middleware) answer
through ``error_response``, so an API client never receives an HTML page, whatever the status.
A 500 carries the request id (also in the X-Request-ID header) for support to find the log line.

With DEBUG (the development server of ``make run``) Django answers an unknown URL and an unhandled
exception with its own technical pages instead of these handlers; under /api/ the request guard
turns them into the same JSON (``as_api_error``), and their tracebacks show no values
(``ValuelessExceptionReporterFilter``).
"""

from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, JsonResponse
from django.template import loader
from django.views.debug import SafeExceptionReporterFilter

API_PREFIX = "/api/"

TITLES = {
    400: "Bad request",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    411: "Length required",
    413: "Request body too large",
    415: "Unsupported media type",
    500: "Server error",
}


def is_api(request) -> bool:
    return request.path.startswith(API_PREFIX)


def error_response(request, status: int, detail: str, field: str | None = None):
    """``{"detail": …}`` (or ``{field: [detail]}`` when a field is named) under /api/, else a page."""
    request_id = getattr(request, "request_id", "")
    if is_api(request):
        body = {field: [detail]} if field else {"detail": detail}
        if status >= 500 and request_id:
            body["request_id"] = request_id
        return JsonResponse(body, status=status)
    context = {"status": status, "title": TITLES.get(status, "Error"),
               "detail": f"{field}: {detail}" if field else detail,
               "request_id": request_id if status >= 500 else ""}
    return HttpResponse(loader.render_to_string("error.html", context), status=status)


def bad_request(request, exception=None):
    if isinstance(exception, RequestDataTooBig):
        return error_response(request, 413, "The request body is larger than this server accepts.")
    return error_response(request, 400, "The request could not be understood.")


def permission_denied(request, exception=None):
    return error_response(request, 403, "You do not have permission to perform this action.")


def not_found(request, exception=None):
    return error_response(request, 404, "Not found.")


def server_error(request):
    return error_response(request, 500, "The server failed to answer; quote the request id to support.")


def as_api_error(request, response):
    """Under /api/, an error answered other than in JSON (with DEBUG, Django's technical 404 and 500
    pages) becomes this module's JSON for its status; any other response is returned as it is."""
    status = response.status_code
    if status < 400 or not is_api(request) or response.get("Content-Type", "").startswith("application/json"):
        return response
    if status >= 500:
        return server_error(request)
    return error_response(request, status, f"{TITLES.get(status, 'Error')}.")


class ValuelessExceptionReporterFilter(SafeExceptionReporterFilter):
    """Tracebacks in error reports show each frame's code and variable names, never their values.

    Django's filter shows every local variable while DEBUG is on (the technical 500 page), and one
    of them may be an unrevealed server seed, which no page may show."""

    def get_traceback_frame_variables(self, request, tb_frame):
        return [(name, self.cleansed_substitute) for name in tb_frame.f_locals]
