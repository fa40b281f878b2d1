"""The alerts API: the list, acknowledging or resolving with a note; incidents, listed and one by one."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from alerts import selectors, services
from alerts.api import serializers as s
from backoffice.api.views import CONFLICT, ERRORS, NOT_FOUND, READ_ERRORS, ApiView, get_or_404, validated


class AlertListView(ApiView):
    required_permissions = {"GET": "alerts.view_alert"}

    @extend_schema(tags=["alerts"], summary="Alerts, most recently seen first", parameters=[s.AlertFilterSerializer],
                   responses={200: s.AlertSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.AlertFilterSerializer, request.query_params)
        return self.paginate(selectors.alert_list(using=self.read_db, filters=filters), s.AlertSerializer)


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


class IncidentListView(ApiView):
    required_permissions = {"GET": "alerts.view_incident"}

    @extend_schema(tags=["alerts"], summary="Incidents, newest first, each with its alerts",
                   parameters=[s.IncidentFilterSerializer], responses={200: s.IncidentSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.IncidentFilterSerializer, request.query_params)
        return self.paginate(selectors.incident_list(using=self.read_db, filters=filters), s.IncidentSerializer)


class IncidentDetailView(ApiView):
    required_permissions = {"GET": "alerts.view_incident"}

    @extend_schema(tags=["alerts"], summary="An incident: its cause, alerts, and when and by whom service was restored",
                   responses={200: s.IncidentSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, incident_id):
        incident = get_or_404(selectors.incident_get, incident_id=incident_id, using=self.read_db)
        return Response(s.IncidentSerializer(incident).data)
