"""Settlement endpoints: the queue, its batches, and a sweep on request. Thin, as backoffice.api.views says."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from backoffice.api.views import ERRORS, READ_ERRORS, ApiView, validated
from settlement import selectors, services
from settlement.api import serializers as s


class SettlementQueueView(ApiView):
    required_permissions = {"GET": "settlement.view_settlementbatch"}

    @extend_schema(tags=["settlement"], summary="Rounds waiting for settlement and the oldest one's age",
                   responses={200: s.SettlementQueueSerializer, **READ_ERRORS})
    def get(self, request):
        return Response(s.SettlementQueueSerializer(selectors.settlement_queue()).data)


class SettlementBatchListView(ApiView):
    required_permissions = {"GET": "settlement.view_settlementbatch"}

    @extend_schema(tags=["settlement"], summary="Settlement batches, newest first",
                   parameters=[s.BatchFilterSerializer],
                   responses={200: s.SettlementBatchSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.BatchFilterSerializer, request.query_params)
        return self.paginate(selectors.batch_list(**filters), s.SettlementBatchSerializer)


class SettlementSweepView(ApiView):
    required_permissions = {"POST": "settlement.request_sweep"}

    @extend_schema(tags=["settlement"], summary="Ask the workers to settle every DEALT round now",
                   request=None, responses={202: s.SettlementQueueSerializer, **ERRORS})
    def post(self, request):
        services.sweep_request(actor=request.user)
        return Response(s.SettlementQueueSerializer(selectors.settlement_queue()).data,
                        status=status.HTTP_202_ACCEPTED)
