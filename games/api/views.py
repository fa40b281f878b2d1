"""API views: thin. Each validates its input with a serializer, reads through games.selectors,
writes through the services, and shapes its output with a serializer.

Every view declares the permission each HTTP method needs (``required_permissions``); see
games.api.permissions and the role matrix in games.roles.
"""

from django.http import Http404, JsonResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from games import selectors, services
from games.api import serializers as s
from games.api.pagination import (
    CursorPagination,
    ExternalIdCursorPagination,
    SlugCursorPagination,
    paginated_response,
)
from games.api.permissions import RolePermission
from games.models import Bet, GameInstance, Round
from settlement import services as settlement_services
from settlement.models import Account

ERRORS = {
    400: OpenApiResponse(description="Bad input: {field: [reason]}."),
    401: OpenApiResponse(description="Not authenticated."),
    403: OpenApiResponse(description="The role lacks the permission."),
}
NOT_FOUND = {404: OpenApiResponse(description="No such object.")}
CONFLICT = {409: OpenApiResponse(description="At odds with the state of things: {field: [reason]}.")}
READ_ERRORS = {code: ERRORS[code] for code in (401, 403)}


def get_or_404(selector, **kwargs):
    try:
        return selector(**kwargs)
    except (GameInstance.DoesNotExist, Round.DoesNotExist, Bet.DoesNotExist, Account.DoesNotExist):
        raise Http404 from None


def validated(serializer_class, data, **kwargs) -> dict:
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class ApiView(APIView):
    permission_classes = [RolePermission]
    required_permissions: dict = {}
    pagination_class = CursorPagination

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in ("POST", "PUT", "PATCH"):
            # Parse the body even where the action takes no input: malformed JSON is always a 400.
            request.data  # noqa: B018

    def paginate(self, queryset, serializer_class, pagination_class=None):
        return paginated_response(view=self, request=self.request, queryset=queryset,
                                  serializer_class=serializer_class, pagination_class=pagination_class)


# --- Game instances -----------------------------------------------------------------------------


class GameListView(ApiView):
    required_permissions = {"GET": "games.view_gameinstance", "POST": "games.add_gameinstance"}
    pagination_class = SlugCursorPagination

    @extend_schema(tags=["games"], summary="List game instances",
                   responses={200: s.GameSerializer(many=True), **READ_ERRORS})
    def get(self, request):
        return self.paginate(selectors.game_list(), s.GameSerializer)

    @extend_schema(tags=["games"], summary="Create a game instance (with its first seed pair)",
                   request=s.GameCreateSerializer, responses={201: s.GameSerializer, **ERRORS})
    def post(self, request):
        data = dict(validated(s.GameCreateSerializer, request.data))
        game = services.game_create(actor=request.user, client_seed=data.pop("client_seed", None), **data)
        return Response(s.GameSerializer(game).data, status=status.HTTP_201_CREATED)


class GameDetailView(ApiView):
    required_permissions = {"GET": "games.view_gameinstance", "PATCH": "games.change_gameinstance"}

    @extend_schema(tags=["games"], summary="A game instance",
                   responses={200: s.GameSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, slug):
        return Response(s.GameSerializer(get_or_404(selectors.game_get, slug=slug)).data)

    @extend_schema(tags=["games"], summary="Change a game's configuration (a reason is required)",
                   request=s.GameUpdateSerializer, responses={200: s.GameSerializer, **ERRORS, **NOT_FOUND})
    def patch(self, request, slug):
        game = get_or_404(selectors.game_get, slug=slug)
        changes = dict(validated(s.GameUpdateSerializer, request.data, instance=game, partial=True))
        reason = changes.pop("reason")
        game = services.game_update(game_id=game.pk, actor=request.user, reason=reason, changes=changes)
        return Response(s.GameSerializer(game).data)


class GameOddsView(ApiView):
    required_permissions = {"GET": "games.view_gameinstance"}

    @extend_schema(tags=["games"], summary="Exact odds and return to player of the game's configuration",
                   responses={200: s.OddsSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, slug):
        game = get_or_404(selectors.game_get, slug=slug)
        return Response(selectors.game_odds(game=game))


class GameSeedsView(ApiView):
    required_permissions = {"GET": "games.view_seedpair"}

    @extend_schema(tags=["seeds"], summary="The active seed pair and the revealed ones (paginated)",
                   responses={200: s.SeedsSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, slug):
        game = get_or_404(selectors.game_get, slug=slug)
        active = selectors.seed_pair_active(game=game)
        paginator = CursorPagination()
        paginator.ordering = ("-revealed_at", "-id")
        revealed = paginator.paginate_queryset(selectors.seed_pairs_revealed(game=game), request, view=self)
        return Response({
            "active": s.ActiveSeedPairSerializer(active).data if active else None,
            "revealed": s.RevealedSeedPairSerializer(revealed, many=True).data,
            "next": paginator.get_next_link(),
            "previous": paginator.get_previous_link(),
        })


class SeedRotateView(ApiView):
    required_permissions = {"POST": "games.rotate_seeds"}

    @extend_schema(tags=["seeds"], summary="Reveal the active seed pair and start a new one",
                   request=s.SeedRotateSerializer,
                   responses={200: s.SeedRotationSerializer, **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, slug):
        game = get_or_404(selectors.game_get, slug=slug)
        data = validated(s.SeedRotateSerializer, request.data)
        revealed, active = services.seed_rotate(game_id=game.pk, actor=request.user,
                                                client_seed=data.get("client_seed"))
        return Response({"revealed": s.RevealedSeedPairSerializer(revealed).data,
                         "active": s.ActiveSeedPairSerializer(active).data})


# --- Rounds -------------------------------------------------------------------------------------


class GameRoundsView(ApiView):
    required_permissions = {"GET": "games.view_round", "POST": "games.open_round"}

    @extend_schema(tags=["rounds"], summary="The game's rounds, newest first",
                   parameters=[s.GameRoundFilterSerializer],
                   responses={200: s.RoundSerializer(many=True), **ERRORS, **NOT_FOUND})
    def get(self, request, slug):
        game = get_or_404(selectors.game_get, slug=slug)
        filters = {**validated(s.GameRoundFilterSerializer, request.query_params), "game": game.slug}
        return self.paginate(selectors.round_list(filters=filters), s.RoundSerializer)

    @extend_schema(tags=["rounds"], summary="Open a round on the game's active seed pair",
                   request=None, responses={201: s.RoundSerializer, **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, slug):
        game = get_or_404(selectors.game_get, slug=slug)
        round_ = services.round_open(game_id=game.pk, actor=request.user)
        return Response(s.RoundSerializer(selectors.round_get(round_id=round_.pk)).data,
                        status=status.HTTP_201_CREATED)


class RoundListView(ApiView):
    required_permissions = {"GET": "games.view_round"}

    @extend_schema(tags=["rounds"], summary="Rounds, newest first, filtered",
                   parameters=[s.RoundFilterSerializer],
                   responses={200: s.RoundSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.RoundFilterSerializer, request.query_params)
        return self.paginate(selectors.round_list(filters=filters), s.RoundSerializer)


class RoundDetailView(ApiView):
    required_permissions = {"GET": "games.view_round"}

    @extend_schema(tags=["rounds"], summary="Recall a round: cards, hands, seeds and bets",
                   responses={200: s.RoundRecallSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, round_id):
        return Response(s.RoundRecallSerializer(get_or_404(selectors.round_recall, round_id=round_id)).data)


class RoundBetsView(ApiView):
    required_permissions = {"POST": "games.place_bet"}

    @extend_schema(
        tags=["bets"], summary="Place a bet (idempotent by idempotency_key)", request=s.BetPlaceSerializer,
        responses={201: s.BetSerializer, 200: OpenApiResponse(s.BetSerializer, description="A replay: the original bet."),
                   **ERRORS, **NOT_FOUND, **CONFLICT},
    )
    def post(self, request, round_id):
        round_ = get_or_404(selectors.round_get, round_id=round_id)
        data = validated(s.BetPlaceSerializer, request.data)
        bet, created = services.bet_place(
            round_id=round_.pk, account_external_id=data["account"], bet_type=data["bet_type"],
            stake=data["stake"], idempotency_key=data["idempotency_key"], client=request.user,
        )
        return Response(s.BetSerializer(selectors.bet_get(bet_id=bet.pk)).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class RoundDealView(ApiView):
    required_permissions = {"POST": "games.deal_round"}

    @extend_schema(tags=["rounds"], summary="Close betting and deal the round by PF-1",
                   request=None, responses={200: s.RoundRecallSerializer, **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, round_id):
        round_ = get_or_404(selectors.round_get, round_id=round_id)
        services.round_deal(round_id=round_.pk, actor=request.user)
        # Read back: settlement may already have run once the deal committed.
        return Response(s.RoundRecallSerializer(selectors.round_recall(round_id=round_.pk)).data)


class RoundVoidView(ApiView):
    required_permissions = {"POST": "games.void_round"}

    @extend_schema(tags=["rounds"], summary="Void an open or dealt round, refunding every pending bet",
                   request=s.RoundVoidSerializer,
                   responses={200: s.RoundRecallSerializer, **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, round_id):
        round_ = get_or_404(selectors.round_get, round_id=round_id)
        data = validated(s.RoundVoidSerializer, request.data)
        services.round_void(round_id=round_.pk, actor=request.user, reason=data["reason"])
        return Response(s.RoundRecallSerializer(selectors.round_recall(round_id=round_.pk)).data)


class RoundVerifyView(ApiView):
    required_permissions = {"GET": "games.verify_round"}

    @extend_schema(tags=["rounds"], summary="Recompute the round from its revealed seed and compare",
                   responses={200: s.VerificationSerializer, **READ_ERRORS, **NOT_FOUND, **CONFLICT})
    def get(self, request, round_id):
        round_ = get_or_404(selectors.round_get, round_id=round_id)
        return Response(selectors.round_verification(round_=round_))


# --- Bets ---------------------------------------------------------------------------------------


class BetListView(ApiView):
    required_permissions = {"GET": "games.view_bet"}

    @extend_schema(tags=["bets"], summary="Bets, newest first, filtered", parameters=[s.BetFilterSerializer],
                   responses={200: s.BetSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.BetFilterSerializer, request.query_params)
        return self.paginate(selectors.bet_list(filters=filters), s.BetSerializer)


class BetDetailView(ApiView):
    required_permissions = {"GET": "games.view_bet"}

    @extend_schema(tags=["bets"], summary="A bet", responses={200: s.BetSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, bet_id):
        return Response(s.BetSerializer(get_or_404(selectors.bet_get, bet_id=bet_id)).data)


# --- Accounts -----------------------------------------------------------------------------------


class AccountListView(ApiView):
    required_permissions = {"GET": "settlement.view_account", "POST": "settlement.add_account"}
    pagination_class = ExternalIdCursorPagination

    @extend_schema(tags=["accounts"], summary="Accounts, by external id",
                   responses={200: s.AccountSerializer(many=True), **READ_ERRORS})
    def get(self, request):
        return self.paginate(selectors.account_list(), s.AccountSerializer)

    @extend_schema(tags=["accounts"], summary="Open an account", request=s.AccountCreateSerializer,
                   responses={201: s.AccountSerializer, **ERRORS})
    def post(self, request):
        data = validated(s.AccountCreateSerializer, request.data)
        account = settlement_services.account_create(actor=request.user, **data)
        return Response(s.AccountSerializer(account).data, status=status.HTTP_201_CREATED)


class AccountDetailView(ApiView):
    required_permissions = {"GET": "settlement.view_account"}

    @extend_schema(tags=["accounts"], summary="An account and its balance",
                   responses={200: s.AccountSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, external_id):
        return Response(s.AccountSerializer(get_or_404(selectors.account_get, external_id=external_id)).data)


class AccountLedgerView(ApiView):
    required_permissions = {"GET": ("settlement.view_account", "settlement.view_ledgerentry")}

    @extend_schema(tags=["accounts"], summary="The account's ledger, newest first",
                   responses={200: s.LedgerEntrySerializer(many=True), **READ_ERRORS, **NOT_FOUND})
    def get(self, request, external_id):
        account = get_or_404(selectors.account_get, external_id=external_id)
        return self.paginate(selectors.account_ledger(account=account),
                             s.LedgerEntrySerializer)


class AccountAdjustView(ApiView):
    required_permissions = {"POST": "settlement.adjust_account"}

    @extend_schema(tags=["accounts"], summary="Credit or debit an account by hand, with a reason",
                   request=s.AccountAdjustSerializer, responses={201: s.AdjustmentSerializer, **ERRORS, **NOT_FOUND})
    def post(self, request, external_id):
        account = get_or_404(selectors.account_get, external_id=external_id)
        data = validated(s.AccountAdjustSerializer, request.data)
        entry = settlement_services.account_adjust(external_id=account.external_id, actor=request.user,
                                                   amount=data["amount"], reason=data["reason"])
        return Response({"account": s.AccountSerializer(entry.account).data,
                         "entry": s.LedgerEntrySerializer(entry).data}, status=status.HTTP_201_CREATED)


# --- Audit trail --------------------------------------------------------------------------------


class AuditHeadView(ApiView):
    required_permissions = {"GET": "games.view_auditevent"}

    @extend_schema(tags=["audit"], summary="The head of the audit hash chain (publish it outside the database)",
                   responses={200: s.AuditHeadSerializer, **READ_ERRORS})
    def get(self, request):
        return Response(s.AuditHeadSerializer(selectors.audit_head()).data)


class AuditEventListView(ApiView):
    required_permissions = {"GET": "games.view_auditevent"}

    @extend_schema(tags=["audit"], summary="Audit events, newest first, filtered",
                   parameters=[s.AuditEventFilterSerializer],
                   responses={200: s.AuditEventSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.AuditEventFilterSerializer, request.query_params)
        return self.paginate(selectors.audit_event_list(filters=filters), s.AuditEventSerializer)


# --- Errors outside the views -------------------------------------------------------------------


def not_found(request, exception=None):
    """404 for URLs that match no route: JSON under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)
