"""The base of every API view and the error responses they document.

Views are thin: each validates its input with a serializer, reads through selectors, writes
through services, and shapes its output with a serializer. Every view declares the permission each
HTTP method needs (``required_permissions``); see backoffice.api.permissions and backoffice.roles.
"""

import functools

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, QueryDict
from drf_spectacular.utils import OpenApiResponse
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from backoffice.api.pagination import CursorPagination, paginated_response
from backoffice.api.permissions import RolePermission
from backoffice.approval_gate import Held
from backoffice.replica_reads import read_alias

ERRORS = {
    400: OpenApiResponse(description="Bad input: {field: [reason]}."),
    401: OpenApiResponse(description="Not authenticated."),
    403: OpenApiResponse(description="The role lacks the permission."),
}
NOT_FOUND = {404: OpenApiResponse(description="No such object.")}
CONFLICT = {409: OpenApiResponse(description="At odds with the state of things: {field: [reason]}.")}
UNAVAILABLE = {503: OpenApiResponse(description="Not configured yet: {setting: [reason]}.")}
READ_ERRORS = {code: ERRORS[code] for code in (401, 403)}
# The answer of an action held for a second person. Its body's serializer belongs to the approvals
# app, above the apps whose views answer it: that app gives it when it starts (document_held).
HELD = {202: OpenApiResponse(description="Needs a second person: the pending request; nothing took effect yet "
                                         "(see /api/v1/approvals/).")}


def document_held(serializer_class) -> None:
    """Document the 202 body of every view that declares ``HELD`` with ``serializer_class``."""
    HELD[202].response = serializer_class


def get_or_404(selector, **kwargs):
    """What the selector returns; a 404 when it finds no such object."""
    try:
        return selector(**kwargs)
    except ObjectDoesNotExist:
        raise Http404 from None


@functools.cache
def _shared(serializer_class):
    """One serializer of the class, without data or context, for reuse. Building a serializer's fields
    costs more than using them (on a bet, more than its SQL), and DRF's list serializer reuses its
    child the same way; neither use below changes the serializer's state."""
    return serializer_class()


def represented(serializer_class, instance) -> dict:
    """The serializer's output for ``instance`` (one that needs no context)."""
    return _shared(serializer_class).to_representation(instance)


def validated(serializer_class, data, **kwargs) -> dict:
    """The serializer's validated data; a 400 naming each field otherwise.

    Query parameters sent blank (``?status=``) or more than once are refused rather than read as
    absent or as the last one: the schema documents each as one non-empty value.
    """
    if isinstance(data, QueryDict):
        names = _shared(serializer_class).fields
        repeated = sorted(name for name in names if len(data.getlist(name)) > 1)
        if repeated:
            raise ValidationError({name: ["Give it once."] for name in repeated})
        blank = sorted(name for name in names if data.get(name) == "")
        if blank:
            raise ValidationError({name: ["May not be blank."] for name in blank})
    if not kwargs:
        try:
            return _shared(serializer_class).run_validation(data)
        except ValidationError:
            pass  # refused: worded below exactly as is_valid words it
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def held_response(held: Held) -> Response:
    """202: the request is stored as a pending approval (backoffice.approval_gate)."""
    return Response({"approval": held.approval}, status=status.HTTP_202_ACCEPTED)


class ApiView(APIView):
    permission_classes = [RolePermission]
    required_permissions: dict = {}
    prepared_reads = False  # its reads are planned for their values (backoffice.read_plans)
    pagination_class = CursorPagination

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in ("POST", "PUT", "PATCH"):
            # Parse the body even where the action takes no input: malformed JSON is always a 400.
            request.data  # noqa: B018

    @property
    def read_db(self) -> str:
        """The database this request's reads use: a replica for a safe request when one may serve it
        (backoffice.replica_reads), the primary otherwise."""
        return read_alias(self.request)

    def paginate(self, queryset, serializer_class, pagination_class=None):
        return paginated_response(view=self, request=self.request, queryset=queryset,
                                  serializer_class=serializer_class, pagination_class=pagination_class)


class KeyLookupView(ApiView):
    """A game server's read of one row by its key (a game, a round, a bet, an account): its
    statements gain from running prepared, and one plan suits every key (backoffice.read_plans)."""

    prepared_reads = True
