"""A guard in front of every view: input the database cannot store never reaches a query.

PostgreSQL refuses a NUL character in any text (and a lone surrogate cannot be encoded), so a
NUL in a URL, a query parameter, a form field, a cookie or the Authorization header would turn a
lookup into a 500. They are refused here first: a path that holds one names nothing (404), any
other input is a 400 (JSON under /api/, a styled page elsewhere). An API body larger than
``DATA_UPLOAD_MAX_MEMORY_SIZE`` is refused by its declared length (413) before it is read.

A body is read by its Content-Length, in UTF-8. So a chunked body (Django would read it as empty)
is refused with 411, and a Content-Type naming another charset with 415: the pages are served in
UTF-8 and so are their forms, the API reads JSON, which is UTF-8 (RFC 8259), and Python's codecs
include zlib, bz2 and base64, which would inflate a small body past the size limit, and punycode,
which decodes in quadratic time. Django decodes the query string with the charset as it builds
the request, before any middleware, so the WSGI entry moves such a charset aside first
(``declared_charset``) and this guard refuses what it set aside.
On the way out, an error under /api/ that is not JSON (Django's DEBUG pages) becomes JSON.
"""

import codecs

from django.conf import settings
from django.http import HttpResponsePermanentRedirect, JsonResponse
from django.middleware.common import CommonMiddleware
from django.utils.http import escape_leading_slashes, parse_header_parameters

from backoffice.errors import as_api_error, error_response, is_api
from backoffice.text import UNSTORABLE_MESSAGE, is_storable

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
# The charsets a body may name (codecs' names for them): UTF-8, and ASCII, a part of it. A charset
# Python does not know Django ignores (it reads UTF-8).
BODY_CHARSETS = frozenset({"utf-8", "ascii"})
# Where the WSGI entry leaves a charset it moved aside, for the guard.
REFUSED_CHARSET = "backoffice.refused_charset"


def declared_charset(environ: dict) -> dict:
    """The environ for Django to build its request from (baccarat_site/wsgi.py): unchanged, unless
    its Content-Type names a charset other than BODY_CHARSETS, which is then moved aside (to
    REFUSED_CHARSET), its parameters with it, for the guard to refuse."""
    content_type = environ.get("CONTENT_TYPE", "")
    if "charset" not in content_type.lower():
        return environ
    media_type, parameters = parse_header_parameters(content_type)  # as Django reads it
    charset = parameters.get("charset")
    try:
        if charset is None or codecs.lookup(charset).name in BODY_CHARSETS:
            return environ
    except LookupError:
        return environ
    return {**environ, "CONTENT_TYPE": media_type, REFUSED_CHARSET: charset}


def _unstorable_parameter(query_dict) -> str | None:
    for name, values in query_dict.lists():
        if not is_storable(name) or not all(is_storable(value) for value in values if isinstance(value, str)):
            return name if is_storable(name) else "parameter name"
    return None


class RequestGuardMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.refusal(request) or as_api_error(request, self.get_response(request))

    def refusal(self, request):
        if not is_storable(request.path):
            return error_response(request, 404, "Not found.")
        if is_api(request) and self._declared_length(request) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            return error_response(request, 413, "The request body is larger than "
                                                f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.")
        if "HTTP_TRANSFER_ENCODING" in request.META:
            return error_response(request, 411, "Send the body with a Content-Length (a chunked body is not read).")
        if REFUSED_CHARSET in request.META:
            return error_response(request, 415, "Bodies are read in UTF-8: send charset=utf-8, or no charset.")
        parameter = _unstorable_parameter(request.GET)
        if parameter:
            return error_response(request, 400, UNSTORABLE_MESSAGE, field=parameter)
        headers = [request.META.get("HTTP_AUTHORIZATION", ""), *request.COOKIES.keys(), *request.COOKIES.values()]
        if not all(is_storable(value) for value in headers):
            return error_response(request, 400, UNSTORABLE_MESSAGE)
        # Forms are for the pages; the API reads JSON only (DRF answers other bodies with 415).
        if request.method == "POST" and request.content_type in FORM_TYPES and not is_api(request):
            parameter = _unstorable_parameter(request.POST)
            if parameter:
                return error_response(request, 400, UNSTORABLE_MESSAGE, field=parameter)
        return None

    @staticmethod
    def _declared_length(request) -> int:
        try:
            return int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return 0


class SlashMiddleware(CommonMiddleware):
    """Django's CommonMiddleware (APPEND_SLASH among it), but a path under /api/ that lacks its
    trailing slash is answered 308 with JSON naming the path to use: a client that follows the
    redirect keeps its method and body (after a 301 a POST arrives as a GET, its bet lost)."""

    def process_request(self, request):
        return self._for_api(request, super().process_request(request))

    def process_response(self, request, response):
        answer = super().process_response(request, response)
        return response if answer is response else self._for_api(request, answer)

    def get_full_path_with_slash(self, request):
        if is_api(request):  # the 308 keeps the body: no need for DEBUG's refusal to redirect a POST
            return escape_leading_slashes(request.get_full_path(force_append_slash=True))
        return super().get_full_path_with_slash(request)

    @staticmethod
    def _for_api(request, answer):
        if answer is None or not is_api(request) or not isinstance(answer, HttpResponsePermanentRedirect):
            return answer
        location = answer["Location"]
        redirect = JsonResponse({"detail": f"The API's paths end with a slash: {location}"}, status=308)
        redirect["Location"] = location
        return redirect
