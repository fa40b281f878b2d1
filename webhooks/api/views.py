"""Webhook endpoints for integration clients: each registers and sees its own."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from backoffice.api.views import ERRORS, NOT_FOUND, READ_ERRORS, ApiView, validated
from webhooks import services
from webhooks.api import serializers as s
from webhooks.models import Delivery, Endpoint


def own_endpoint(request, endpoint_id, using: str = "default") -> Endpoint:
    endpoint = Endpoint.objects.using(using).filter(pk=endpoint_id, owner=request.user).first()
    if endpoint is None:
        raise Http404
    return endpoint


class EndpointListView(ApiView):
    required_permissions = {"GET": "webhooks.view_endpoint", "POST": "webhooks.add_endpoint"}

    @extend_schema(tags=["webhooks"], summary="Your webhook endpoints",
                   responses={200: s.EndpointSerializer(many=True), **READ_ERRORS})
    def get(self, request):
        return self.paginate(Endpoint.objects.using(self.read_db).filter(owner=request.user), s.EndpointSerializer)

    @extend_schema(tags=["webhooks"], summary="Register an endpoint for events (the answer holds its secret, once)",
                   request=s.EndpointCreateSerializer, responses={201: s.EndpointCreatedSerializer, **ERRORS})
    def post(self, request):
        if request.user.is_staff:  # staff own no endpoint: they configure a client's in the admin
            raise PermissionDenied("Endpoints registered through the API belong to the integration client that "
                                   "registers them; staff configure a client's endpoints in the admin.")
        data = validated(s.EndpointCreateSerializer, request.data)
        endpoint, secret = services.endpoint_create(actor=request.user, owner=request.user, **data)
        return Response({**s.EndpointSerializer(endpoint).data, "secret": secret}, status=status.HTTP_201_CREATED)


class EndpointDetailView(ApiView):
    required_permissions = {"GET": "webhooks.view_endpoint", "PATCH": "webhooks.change_endpoint"}

    @extend_schema(tags=["webhooks"], summary="An endpoint", responses={200: s.EndpointSerializer, **READ_ERRORS,
                                                                          **NOT_FOUND})
    def get(self, request, endpoint_id):
        return Response(s.EndpointSerializer(own_endpoint(request, endpoint_id, self.read_db)).data)

    @extend_schema(tags=["webhooks"], summary="Change an endpoint's URL, events or activity",
                   request=s.EndpointInputSerializer, responses={200: s.EndpointSerializer, **ERRORS, **NOT_FOUND})
    def patch(self, request, endpoint_id):
        endpoint = own_endpoint(request, endpoint_id)
        changes = validated(s.EndpointInputSerializer, request.data, partial=True)
        endpoint = services.endpoint_update(endpoint_id=endpoint.pk, actor=request.user, changes=dict(changes))
        return Response(s.EndpointSerializer(endpoint).data)


class EndpointRotateSecretView(ApiView):
    required_permissions = {"POST": "webhooks.change_endpoint"}

    @extend_schema(tags=["webhooks"], summary="Rotate the signing secret (both sign during the overlap)",
                   request=None, responses={200: s.SecretSerializer, **ERRORS, **NOT_FOUND})
    def post(self, request, endpoint_id):
        endpoint = own_endpoint(request, endpoint_id)
        return Response({"secret": services.endpoint_rotate_secret(endpoint_id=endpoint.pk, actor=request.user)})


class EndpointDeliveriesView(ApiView):
    required_permissions = {"GET": "webhooks.view_delivery"}

    @extend_schema(tags=["webhooks"], summary="The endpoint's deliveries, newest first",
                   responses={200: s.DeliverySerializer(many=True), **READ_ERRORS, **NOT_FOUND})
    def get(self, request, endpoint_id):
        endpoint = own_endpoint(request, endpoint_id, self.read_db)
        deliveries = Delivery.objects.using(self.read_db).filter(endpoint=endpoint).select_related("event")
        return self.paginate(deliveries, s.DeliverySerializer)
