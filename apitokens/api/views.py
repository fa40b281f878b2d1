"""API tokens through the API, for administrators: list (never a token), make, rotate, revoke. A
session's call needs a fresh second factor (backoffice.step_up); the new token is in the answer once."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from apitokens import selectors, services
from apitokens.api import serializers as s
from backoffice.api.permissions import RolePermission
from backoffice.api.views import ERRORS, NOT_FOUND, READ_ERRORS, ApiView, get_or_404, validated
from backoffice.step_up import FreshSecondFactor


def _owner(username: str):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise ValidationError({"owner": [f"No user named {username!r}."]})
    return user


def _created(token, secret) -> Response:
    return Response({"api_token": s.ApiTokenSerializer(token).data, "token": secret}, status=status.HTTP_201_CREATED)


class ApiTokenListView(ApiView):
    permission_classes = [RolePermission, FreshSecondFactor]
    required_permissions = {"GET": "apitokens.view_apitoken", "POST": "apitokens.add_apitoken"}

    @extend_schema(tags=["api tokens"], summary="API tokens, newest first (never the tokens themselves)",
                   parameters=[s.ApiTokenListQuerySerializer],
                   responses={200: s.ApiTokenSerializer(many=True), **ERRORS})
    def get(self, request):
        query = validated(s.ApiTokenListQuerySerializer, request.query_params)
        owner = _owner(query["owner"]) if "owner" in query else None
        return self.paginate(selectors.token_list(owner=owner, using=self.read_db), s.ApiTokenSerializer)

    @extend_schema(tags=["api tokens"], summary="Make a token (the answer holds it, once)",
                   request=s.ApiTokenInputSerializer, responses={201: s.ApiTokenCreatedSerializer, **ERRORS})
    def post(self, request):
        data = validated(s.ApiTokenInputSerializer, request.data)
        token, secret = services.token_create(actor=request.user, owner=_owner(data.pop("owner")), **data)
        return _created(token, secret)


class ApiTokenRotateView(ApiView):
    permission_classes = [RolePermission, FreshSecondFactor]
    required_permissions = {"POST": "apitokens.rotate_apitoken"}

    @extend_schema(tags=["api tokens"], summary="A new token beside this one, which expires after an overlap",
                   request=s.ApiTokenRotateSerializer,
                   responses={201: s.ApiTokenCreatedSerializer, **ERRORS, **NOT_FOUND})
    def post(self, request, token_id):
        data = validated(s.ApiTokenRotateSerializer, request.data)
        get_or_404(selectors.token_get, token_id=token_id)
        token, secret = services.token_rotate(token_id=token_id, actor=request.user, **data)
        return _created(token, secret)


class ApiTokenRevokeView(ApiView):
    permission_classes = [RolePermission, FreshSecondFactor]
    required_permissions = {"POST": "apitokens.rotate_apitoken"}

    @extend_schema(tags=["api tokens"], summary="Disable this token for good", request=None,
                   responses={200: s.ApiTokenSerializer, **READ_ERRORS, **NOT_FOUND})
    def post(self, request, token_id):
        get_or_404(selectors.token_get, token_id=token_id)
        return Response(s.ApiTokenSerializer(services.token_revoke(token_id=token_id, actor=request.user)).data)
