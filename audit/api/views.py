"""The audit trail through the API: its signed head, proofs, and its events filtered."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from audit import selectors
from audit.api import serializers as s
from backoffice.api.views import CONFLICT, ERRORS, READ_ERRORS, UNAVAILABLE, ApiView, validated

VIEW_PERMISSION = "audit.view_auditevent"
AUTH_LOG_PERMISSION = "audit.view_authevent"  # administrators and regulators


class AuditHeadView(ApiView):
    required_permissions = {"GET": VIEW_PERMISSION}

    @extend_schema(tags=["audit"], summary="The latest signed tree head of the audit log and its public key",
                   responses={200: s.AuditLogStatusSerializer, **READ_ERRORS, **UNAVAILABLE})
    def get(self, request):
        return Response(s.AuditLogStatusSerializer(selectors.audit_log_status(using=self.read_db)).data)


class InclusionProofView(ApiView):
    required_permissions = {"GET": VIEW_PERMISSION}

    @extend_schema(tags=["audit"], summary="Inclusion proof of an event (check it with pf1_verify.py --audit-proof)",
                   parameters=[s.InclusionQuerySerializer],
                   responses={200: s.InclusionProofSerializer, **ERRORS, **CONFLICT, **UNAVAILABLE})
    def get(self, request):
        query = validated(s.InclusionQuerySerializer, request.query_params)
        return Response(s.InclusionProofSerializer(selectors.audit_inclusion_proof(using=self.read_db, **query)).data)


class ConsistencyProofView(ApiView):
    required_permissions = {"GET": VIEW_PERMISSION}

    @extend_schema(tags=["audit"], summary="Consistency proof between two tree sizes (pf1_verify.py --audit-proof)",
                   parameters=[s.ConsistencyQuerySerializer],
                   responses={200: s.ConsistencyProofSerializer, **ERRORS, **CONFLICT, **UNAVAILABLE})
    def get(self, request):
        query = validated(s.ConsistencyQuerySerializer, request.query_params)
        proof = selectors.audit_consistency_proof(using=self.read_db, **query)
        return Response(s.ConsistencyProofSerializer(proof).data)


class AuditEventListView(ApiView):
    required_permissions = {"GET": VIEW_PERMISSION}

    @extend_schema(tags=["audit"], summary="Audit events, newest first, filtered",
                   parameters=[s.AuditEventFilterSerializer],
                   responses={200: s.AuditEventSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.AuditEventFilterSerializer, request.query_params)
        return self.paginate(selectors.audit_event_list(using=self.read_db, filters=filters), s.AuditEventSerializer)


class AuthEventListView(ApiView):
    required_permissions = {"GET": AUTH_LOG_PERMISSION}

    @extend_schema(tags=["audit"], summary="The authentication log: log-ins, lock-outs, refused and changed API "
                                           "tokens, newest first, filtered",
                   parameters=[s.AuthEventFilterSerializer],
                   responses={200: s.AuthEventSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.AuthEventFilterSerializer, request.query_params)
        return self.paginate(selectors.auth_event_list(using=self.read_db, filters=filters), s.AuthEventSerializer)
