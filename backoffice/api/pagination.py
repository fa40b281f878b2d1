"""Cursor pagination: stable under inserts, never a COUNT of the whole table, and strict about its
parameters: a page size outside 1 to ``max_page_size`` or a blank cursor is a 400 naming the
parameter (not silently the default page); a cursor this server did not give out names no page
of results: a 404 naming ``cursor`` (documented). The schema gives a cursor's alphabet (base64, as
the server writes them), so a value of spaces or control characters, which Python takes for blank,
is one the schema does not allow either."""

from urllib import parse

from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination as DRFCursorPagination

# What DRF's cursors are made of: the base64 of a query string.
CURSOR_PATTERN = "^[A-Za-z0-9+/=]+$"
NO_SUCH_PAGE = "No such page: not a cursor this API gave out."


class CursorPagination(DRFCursorPagination):
    """Newest first by id (every model here has an increasing id)."""

    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request):
        if len(request.query_params.getlist(self.page_size_query_param)) > 1:
            raise ValidationError({self.page_size_query_param: ["Give it once."]})
        given = request.query_params.get(self.page_size_query_param)
        if given is None:
            return self.page_size
        if not (given.isascii() and given.isdigit() and 1 <= int(given) <= self.max_page_size):
            message = f"Must be a whole number from 1 to {self.max_page_size}."
            raise ValidationError({self.page_size_query_param: [message]})
        return int(given)

    def decode_cursor(self, request):
        if len(request.query_params.getlist(self.cursor_query_param)) > 1:
            raise ValidationError({self.cursor_query_param: ["Give it once."]})
        given = request.query_params.get(self.cursor_query_param)
        if given is not None and given.strip() == "":
            raise ValidationError({self.cursor_query_param: ["May not be blank."]})
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            cursor = None
        # DRF also reads values it never writes ("`{", whose base64 decoding skips both characters, or
        # "====": an empty cursor), as the first page. A cursor is what encode_cursor writes.
        if given is not None and (cursor is None or self._written(cursor) != given):
            raise NotFound({self.cursor_query_param: [NO_SUCH_PAGE]})
        return cursor

    def _written(self, cursor) -> str:
        query = parse.urlsplit(self.encode_cursor(cursor)).query
        return parse.parse_qs(query).get(self.cursor_query_param, [""])[0]

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": self.max_page_size}
            if parameter["name"] == self.cursor_query_param:
                parameter["schema"] = {"type": "string", "minLength": 1, "pattern": CURSOR_PATTERN}
        return parameters


class SlugCursorPagination(CursorPagination):
    ordering = "slug"


class ExternalIdCursorPagination(CursorPagination):
    ordering = "external_id"


def paginated_response(*, view, request, queryset, serializer_class, pagination_class=None):
    paginator = (pagination_class or view.pagination_class)()
    page = paginator.paginate_queryset(queryset, request, view=view)
    data = serializer_class(page, many=True, context={"request": request, "view": view}).data
    return paginator.get_paginated_response(data)
