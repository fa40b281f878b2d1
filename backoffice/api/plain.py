"""The short way through an API view for a plain request: a game server's single bet.

DRF's dispatch wraps every request in a Request of its own, builds the view's parsers,
authenticators, negotiator, permissions and throttles, negotiates a renderer and finalizes a
Response. Measured through gunicorn under load, skipping it saved a bet about 0.3 ms of the web
worker's CPU (12 % more bets a second beside an unchanged 404 floor). A view that takes
``PlainRequestMixin`` answers a *plain* request with the same pieces called directly: the view's
token authentication, permission and throttle classes, its parser, its ``answer`` (which its DRF
handler calls too) and its renderer. Off-switch: ``settings.API_PLAIN_REQUESTS`` (decision record
docs/decisions/0002).

A plain request is a POST of a non-empty JSON body (``Content-Type: application/json``), with
no query string, from a client that accepts JSON (no Accept header, ``*/*`` or exactly JSON),
presenting ``Authorization: Token …``. Any other request, and a plain one whose token or
permission fails, goes through DRF's dispatch unchanged: nothing has been counted yet, so those
answers are DRF's own. Once the throttle has counted the request, every answer comes from here,
refusals included, through the view's exception handling with the request already authenticated.
"""

import io

from django.conf import settings
from django.http import HttpResponse
from rest_framework.exceptions import APIException
from rest_framework.request import ForcedAuthentication, Request

JSON = "application/json"
# Accept headers under which DRF's negotiation picks the JSON renderer without a media type parameter
# (an empty one is not among them: DRF finds no acceptable type in it and answers 406).
PLAIN_ACCEPTS = frozenset({None, "*/*", JSON})


def is_plain(request, token_keyword: str = "Token") -> bool:
    meta = request.META
    length = meta.get("CONTENT_LENGTH") or ""
    scheme = f"{token_keyword} ".lower()
    return (request.method == "POST" and meta.get("CONTENT_TYPE") == JSON and not meta.get("QUERY_STRING")
            and meta.get("HTTP_ACCEPT") in PLAIN_ACCEPTS and length.isascii() and length.isdigit()
            and int(length) > 0 and meta.get("HTTP_AUTHORIZATION", "")[:len(scheme)].lower() == scheme)


class PlainRequestMixin:
    """For an ApiView whose POST handler answers with ``answer(user, data, **kwargs) -> (body, status)``
    and whose first authentication class reads the token."""

    def dispatch(self, request, *args, **kwargs):
        token_authentication = self.authentication_classes[0]()
        if not settings.API_PLAIN_REQUESTS or not is_plain(request, token_authentication.keyword):
            return super().dispatch(request, *args, **kwargs)
        try:
            credentials = token_authentication.authenticate(request)
        except APIException:
            credentials = None
        if credentials is None:
            return super().dispatch(request, *args, **kwargs)  # DRF words the 401
        self.args, self.kwargs = args, kwargs
        request.user, request.auth = credentials  # as DRF's Request sets them on the request it wraps
        if not all(permission.has_permission(request, self) for permission in self.get_permissions()):
            return super().dispatch(request, *args, **kwargs)  # DRF words the 403
        try:
            self.check_throttles(request)  # counts the request: every answer comes from here on
            parser_context = {"encoding": settings.DEFAULT_CHARSET}
            data = self.parser_classes[0]().parse(io.BytesIO(request.body), JSON, parser_context)
            body, status = self.answer(request.user, data, **kwargs)
        except Exception as exc:  # answered as DRF's dispatch answers it
            return self._refused(request, credentials, exc)
        response = HttpResponse(self.renderer_classes[0]().render(body), status=status, content_type=JSON)
        for name, value in self.default_response_headers.items():
            response[name] = value
        return response

    def _refused(self, request, credentials, exc):
        """The view's exception handling of ``exc`` for the already authenticated request."""
        drf_request = Request(request, parsers=self.get_parsers(), authenticators=(ForcedAuthentication(*credentials),),
                              negotiator=self.get_content_negotiator(), parser_context=self.get_parser_context(request))
        self.request, self.headers = drf_request, self.default_response_headers
        self.format_kwarg = self.get_format_suffix(**self.kwargs)
        drf_request.accepted_renderer, drf_request.accepted_media_type = self.perform_content_negotiation(
            drf_request, force=True)
        return self.finalize_response(drf_request, self.handle_exception(exc), *self.args, **self.kwargs)
