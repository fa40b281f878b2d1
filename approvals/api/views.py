"""The approvals API: the queue, and approving or rejecting as the second person."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from approvals import selectors, services
from approvals.api import serializers as s
from approvals.choices import ApprovalAction
from backoffice.api.permissions import RolePermission
from backoffice.api.views import CONFLICT, ERRORS, NOT_FOUND, ApiView, get_or_404, validated
from backoffice.step_up import FreshSecondFactor
from games import selectors as game_selectors
from games.api.serializers import GameSerializer, RoundRecallSerializer
from wallet.api.serializers import AccountSerializer, LedgerEntrySerializer

# How each applied action's result reads: as the endpoint that would have applied it at once answers.
RESULTS = {
    ApprovalAction.GAME_UPDATE: lambda game: GameSerializer(game).data,
    ApprovalAction.GAME_ACTIVATE: lambda game: GameSerializer(game).data,
    ApprovalAction.GAME_CREATE: lambda game: GameSerializer(game).data,
    ApprovalAction.ACCOUNT_ADJUST: lambda entry: {"account": AccountSerializer(entry.account).data,
                                                  "entry": LedgerEntrySerializer(entry).data},
    ApprovalAction.ROUND_VOID: lambda round_: RoundRecallSerializer(
        game_selectors.round_recall(round_id=round_.pk)).data,
}


class ApprovalListView(ApiView):
    required_permissions = {"GET": "approvals.view_approval"}

    @extend_schema(tags=["approvals"], summary="Requests waiting for (or decided by) a second person, newest first",
                   parameters=[s.ApprovalFilterSerializer], responses={200: s.ApprovalSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.ApprovalFilterSerializer, request.query_params)
        return self.paginate(selectors.approval_list(using=self.read_db, filters=filters), s.ApprovalSerializer)


class ApprovalDetailView(ApiView):
    required_permissions = {"GET": "approvals.view_approval"}

    @extend_schema(tags=["approvals"], summary="A request and its decision",
                   responses={200: s.ApprovalSerializer, **ERRORS, **NOT_FOUND})
    def get(self, request, approval_id):
        approval = get_or_404(selectors.approval_get, using=self.read_db, approval_id=approval_id)
        return Response(s.ApprovalSerializer(approval).data)


class ApprovalApproveView(ApiView):
    required_permissions = {"POST": "approvals.approve_approval"}
    permission_classes = [RolePermission, FreshSecondFactor]

    @extend_schema(tags=["approvals"], summary="Approve and apply (never one's own request)",
                   request=s.ApprovalDecisionSerializer,
                   responses={200: s.ApprovalAppliedSerializer, **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, approval_id):
        get_or_404(selectors.approval_get, approval_id=approval_id)
        data = validated(s.ApprovalDecisionSerializer, request.data)
        approval, result = services.approval_approve(approval_id=approval_id, actor=request.user,
                                                     reason=data["reason"])
        return Response({"approval": s.ApprovalSerializer(approval).data,
                         "result": RESULTS[approval.action](result)})


class ApprovalRejectView(ApiView):
    required_permissions = {"POST": "approvals.approve_approval"}
    permission_classes = [RolePermission, FreshSecondFactor]

    @extend_schema(tags=["approvals"], summary="Reject: nothing of the request takes effect",
                   request=s.ApprovalDecisionSerializer,
                   responses={200: s.ApprovalSerializer, **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, approval_id):
        get_or_404(selectors.approval_get, approval_id=approval_id)
        data = validated(s.ApprovalDecisionSerializer, request.data)
        approval = services.approval_reject(approval_id=approval_id, actor=request.user, reason=data["reason"])
        return Response(s.ApprovalSerializer(approval).data)
