"""Cursor pagination: stable under inserts, and never a COUNT of the whole table."""

from rest_framework.pagination import CursorPagination as DRFCursorPagination


class CursorPagination(DRFCursorPagination):
    """Newest first by id (every model here has an increasing id)."""

    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class SlugCursorPagination(CursorPagination):
    ordering = "slug"


class ExternalIdCursorPagination(CursorPagination):
    ordering = "external_id"


def paginated_response(*, view, request, queryset, serializer_class, pagination_class=None):
    paginator = (pagination_class or view.pagination_class)()
    page = paginator.paginate_queryset(queryset, request, view=view)
    data = serializer_class(page, many=True, context={"request": request, "view": view}).data
    return paginator.get_paginated_response(data)
