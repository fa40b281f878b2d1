"""Settlement endpoints: the queue, its batches, and a sweep on request. Thin, as backoffice.api.views says."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from backoffice.api.views import CONFLICT, ERRORS, NOT_FOUND, READ_ERRORS, ApiView, get_or_404, validated
from games import selectors as game_selectors
from games.api.serializers import BetSerializer
from settlement import selectors, services
from settlement.api import serializers as s


class SettlementQueueView(ApiView):
    required_permissions = {"GET": "settlement.view_settlementbatch"}

    @extend_schema(tags=["settlement"], summary="Rounds waiting for settlement and the oldest one's age",
                   responses={200: s.SettlementQueueSerializer, **READ_ERRORS})
    def get(self, request):
        return Response(s.SettlementQueueSerializer(selectors.settlement_queue(using=self.read_db)).data)


class SettlementBatchListView(ApiView):
    required_permissions = {"GET": "settlement.view_settlementbatch"}

    @extend_schema(tags=["settlement"], summary="Settlement batches, newest first",
                   parameters=[s.BatchFilterSerializer],
                   responses={200: s.SettlementBatchSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.BatchFilterSerializer, request.query_params)
        return self.paginate(selectors.batch_list(using=self.read_db, **filters), s.SettlementBatchSerializer)


class SettlementSweepView(ApiView):
    required_permissions = {"POST": "settlement.request_sweep"}

    @extend_schema(tags=["settlement"], summary="Ask the workers to settle every DEALT round now",
                   request=None, responses={202: s.SettlementQueueSerializer, **ERRORS})
    def post(self, request):
        services.sweep_request(actor=request.user)
        return Response(s.SettlementQueueSerializer(selectors.settlement_queue()).data,
                        status=status.HTTP_202_ACCEPTED)


class HeldBetSettleView(ApiView):
    required_permissions = {"POST": "games.settle_held_bet"}

    @extend_schema(tags=["bets"], summary="Settle a held bet at its round's outcome (an operator's way out)",
                   description="A bet is HELD when its round settled but its own writes failed (its reason is in "
                   "hold_reason). This settles it at its round's outcome with its own multiplier and pays it "
                   "once. 409 when it is not held, or when its writes fail again (it stays held, the answer "
                   "names the reason).",
                   request=s.HeldBetSettleSerializer, responses={200: BetSerializer, **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, bet_id):
        bet = get_or_404(game_selectors.bet_get, bet_id=bet_id)
        data = validated(s.HeldBetSettleSerializer, request.data)
        services.held_bet_settle(bet_id=bet.pk, actor=request.user, reason=data["reason"])
        return Response(BetSerializer(game_selectors.bet_get(bet_id=bet.pk)).data)
