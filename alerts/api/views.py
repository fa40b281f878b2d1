"""The alerts API: the list, and acknowledging or resolving with a note."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from alerts import selectors, services
from alerts.api import serializers as s
from backoffice.api.views import CONFLICT, ERRORS, NOT_FOUND, ApiView, get_or_404, validated


class AlertListView(ApiView):
    required_permissions = {"GET": "alerts.view_alert"}

    @extend_schema(tags=["alerts"], summary="Alerts, most recently seen first", parameters=[s.AlertFilterSerializer],
                   responses={200: s.AlertSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.AlertFilterSerializer, request.query_params)
        return self.paginate(selectors.alert_list(filters=filters), s.AlertSerializer)


class AlertAcknowledgeView(ApiView):
    required_permissions = {"POST": "alerts.handle_alert"}

    @extend_schema(tags=["alerts"], summary="Acknowledge an open alert, with a note", request=s.AlertNoteSerializer,
                   responses={200: s.AlertSerializer, **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, alert_id):
        get_or_404(selectors.alert_get, alert_id=alert_id)
        note = validated(s.AlertNoteSerializer, request.data)["note"]
        return Response(s.AlertSerializer(services.alert_acknowledge(alert_id=alert_id, actor=request.user,
                                                                     note=note)).data)


class AlertResolveView(ApiView):
    required_permissions = {"POST": "alerts.handle_alert"}

    @extend_schema(tags=["alerts"], summary="Resolve an alert, with a note", request=s.AlertNoteSerializer,
                   responses={200: s.AlertSerializer, **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, alert_id):
        get_or_404(selectors.alert_get, alert_id=alert_id)
        note = validated(s.AlertNoteSerializer, request.data)["note"]
        return Response(s.AlertSerializer(services.alert_resolve(alert_id=alert_id, actor=request.user,
                                                                 note=note)).data)
