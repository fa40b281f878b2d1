"""The audit trail through the API: its head, and its events filtered."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from audit import selectors
from audit.api import serializers as s
from backoffice.api.views import ERRORS, READ_ERRORS, ApiView, validated

VIEW_PERMISSION = "audit.view_auditevent"


class AuditHeadView(ApiView):
    required_permissions = {"GET": VIEW_PERMISSION}

    @extend_schema(tags=["audit"], summary="The head of the audit hash chain (publish it outside the database)",
                   responses={200: s.AuditHeadSerializer, **READ_ERRORS})
    def get(self, request):
        return Response(s.AuditHeadSerializer(selectors.audit_head()).data)


class AuditEventListView(ApiView):
    required_permissions = {"GET": VIEW_PERMISSION}

    @extend_schema(tags=["audit"], summary="Audit events, newest first, filtered",
                   parameters=[s.AuditEventFilterSerializer],
                   responses={200: s.AuditEventSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.AuditEventFilterSerializer, request.query_params)
        return self.paginate(selectors.audit_event_list(filters=filters), s.AuditEventSerializer)
