"""The games API: game instances, seed pairs, rounds and bets (views thin: see backoffice.api.views)."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from backoffice.api.exceptions import error_status_and_body
from backoffice.api.pagination import CursorPagination, SlugCursorPagination
from backoffice.api.permissions import RolePermission
from backoffice.api.plain import PlainRequestMixin
from backoffice.api.views import (
    CONFLICT,
    ERRORS,
    HELD,
    NOT_FOUND,
    READ_ERRORS,
    ApiView,
    KeyLookupView,
    get_or_404,
    held_response,
    represented,
    validated,
)
from backoffice.approval_gate import Held, submit
from backoffice.step_up import FreshSecondFactor
from games import selectors, services
from games.api import serializers as s
from games.models import Bet
from games.signals import bets_answered

# --- Game instances -----------------------------------------------------------------------------


class GameListView(ApiView):
    required_permissions = {"GET": "games.view_gameinstance", "POST": "games.add_gameinstance"}
    pagination_class = SlugCursorPagination

    @extend_schema(tags=["games"], summary="List game instances",
                   responses={200: s.GameSerializer(many=True), **READ_ERRORS})
    def get(self, request):
        return self.paginate(selectors.game_list(using=self.read_db), s.GameSerializer)

    @extend_schema(tags=["games"], summary="Create a game instance (with its first seed pair)",
                   request=s.GameCreateSerializer, responses={201: s.GameSerializer, **HELD, **ERRORS})
    def post(self, request):
        data = dict(validated(s.GameCreateSerializer, request.data))
        outcome = submit(services.game_create, actor=request.user, reason=data.pop("reason", ""),
                         client_seed=data.pop("client_seed", None), **data)
        if isinstance(outcome, Held):
            return held_response(outcome)
        return Response(s.GameSerializer(outcome.result).data, status=status.HTTP_201_CREATED)


class GameDetailView(KeyLookupView):
    required_permissions = {"GET": "games.view_gameinstance", "PATCH": "games.change_gameinstance"}

    @extend_schema(tags=["games"], summary="A game instance",
                   responses={200: s.GameSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, slug):
        return Response(represented(s.GameSerializer, get_or_404(selectors.game_get, using=self.read_db, slug=slug)))

    @extend_schema(tags=["games"], summary="Change a game's configuration (a reason is required)",
                   request=s.GameUpdateSerializer,
                   responses={200: s.GameSerializer, **HELD, **ERRORS, **NOT_FOUND})
    def patch(self, request, slug):
        game = get_or_404(selectors.game_get, slug=slug)
        changes = dict(validated(s.GameUpdateSerializer, request.data, instance=game, partial=True))
        reason = changes.pop("reason")
        outcome = submit(services.game_update, game_id=game.pk, actor=request.user, reason=reason, changes=changes)
        if isinstance(outcome, Held):
            return held_response(outcome)
        return Response(s.GameSerializer(outcome.result).data)


class GameOddsView(ApiView):
    required_permissions = {"GET": "games.view_gameinstance"}

    @extend_schema(tags=["games"], summary="Exact odds and return to player of the game's configuration",
                   responses={200: s.OddsSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, slug):
        game = get_or_404(selectors.game_get, using=self.read_db, slug=slug)
        return Response(selectors.game_odds(game=game))


class GameSeedsView(ApiView):
    required_permissions = {"GET": "games.view_seedpair"}

    @extend_schema(tags=["seeds"], summary="The active seed pair and the revealed ones (paginated)",
                   responses={200: s.SeedsSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, slug):
        game = get_or_404(selectors.game_get, using=self.read_db, slug=slug)
        active = selectors.seed_pair_active(using=self.read_db, game=game)
        paginator = CursorPagination()
        paginator.ordering = ("-revealed_at", "-id")
        revealed = paginator.paginate_queryset(selectors.seed_pairs_revealed(using=self.read_db, game=game), request,
                                               view=self)
        return Response({
            "active": s.ActiveSeedPairSerializer(active).data if active else None,
            "revealed": s.RevealedSeedPairSerializer(revealed, many=True).data,
            "next": paginator.get_next_link(),
            "previous": paginator.get_previous_link(),
        })


class SeedRotateView(ApiView):
    required_permissions = {"POST": "games.rotate_seeds"}

    @extend_schema(
        tags=["seeds"], summary="Start a new seed pair now; the old one is revealed once its open rounds close",
        request=s.SeedRotateSerializer,
        responses={200: OpenApiResponse(s.SeedRotationSerializer, description="Rotated and revealed at once."),
                   202: OpenApiResponse(s.SeedRotationPendingSerializer,
                                        description="Rotated; the reveal waits for the pair's open rounds."),
                   **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, slug):
        game = get_or_404(selectors.game_get, slug=slug)
        data = validated(s.SeedRotateSerializer, request.data)
        retired, active = services.seed_rotate(game_id=game.pk, actor=request.user, reason=data["reason"],
                                               client_seed=data.get("client_seed"))
        if retired.is_revealed:
            return Response({"revealed": s.RevealedSeedPairSerializer(retired).data,
                             "active": s.ActiveSeedPairSerializer(active).data})
        retired.open_rounds = selectors.seed_pair_open_rounds(pair=retired)
        return Response({"pending_reveal": s.PendingRevealSerializer(retired).data,
                         "active": s.ActiveSeedPairSerializer(active).data}, status=status.HTTP_202_ACCEPTED)


# --- Rounds -------------------------------------------------------------------------------------


class GameRoundsView(ApiView):
    required_permissions = {"GET": "games.view_round", "POST": "games.open_round"}

    @extend_schema(tags=["rounds"], summary="The game's rounds, newest first",
                   parameters=[s.GameRoundFilterSerializer],
                   responses={200: s.RoundSerializer(many=True), **ERRORS, **NOT_FOUND})
    def get(self, request, slug):
        game = get_or_404(selectors.game_get, using=self.read_db, slug=slug)
        filters = {**validated(s.GameRoundFilterSerializer, request.query_params), "game": game.slug}
        return self.paginate(selectors.round_list(using=self.read_db, filters=filters), s.RoundSerializer)

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
        return self.paginate(selectors.round_list(using=self.read_db, filters=filters), s.RoundSerializer)


class RoundDetailView(KeyLookupView):
    required_permissions = {"GET": "games.view_round"}

    @extend_schema(tags=["rounds"], summary="Recall a round: cards, hands, seeds and bets",
                   responses={200: s.RoundRecallSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, round_id):
        recall = get_or_404(selectors.round_recall, using=self.read_db, round_id=round_id)
        return Response(s.RoundRecallSerializer(recall).data)


class RoundBetsView(PlainRequestMixin, ApiView):
    """A game server's plain bet takes the short way (backoffice.api.plain); every other request
    takes DRF's dispatch to the same ``answer``."""

    required_permissions = {"POST": "games.place_bet"}

    @extend_schema(
        tags=["bets"], summary="Place a bet (idempotent by idempotency_key)", request=s.BetPlaceSerializer,
        responses={201: s.BetSerializer,
                   200: OpenApiResponse(s.BetSerializer, description="A replay: the original bet."),
                   **ERRORS, **NOT_FOUND, **CONFLICT},
    )
    def post(self, request, round_id):
        body, code = self.answer(request.user, request.data, round_id=round_id)
        return Response(body, status=code)

    @staticmethod
    def answer(client, data, *, round_id):
        try:
            data = validated(s.BetPlaceSerializer, data)
            bet, created = get_or_404(
                services.bet_place, round_id=round_id, account_external_id=data["account"],
                bet_type=data["bet_type"], stake=data["stake"], idempotency_key=data["idempotency_key"],
                client=client,
            )
        except Exception as error:
            bets_answered.send(sender=Bet, accepted=(), refused=(error,))
            raise
        if created:
            bets_answered.send(sender=Bet, accepted=(bet,), refused=())
        return represented(s.BetSerializer, bet), status.HTTP_201_CREATED if created else status.HTTP_200_OK


class RoundBetsBulkView(ApiView):
    required_permissions = {"POST": "games.place_bet"}

    @extend_schema(
        tags=["bets"], summary="Place many bets on a round, each on its own (idempotent per item)",
        request=s.BetBulkPlaceSerializer,
        responses={200: OpenApiResponse(s.BetBulkResultsSerializer,
                                        description="One result per bet, in order; the accepted ones are "
                                        "written together in one transaction."),
                   **ERRORS, **NOT_FOUND, **CONFLICT},
    )
    def post(self, request, round_id):
        items = validated(s.BetBulkPlaceSerializer, request.data)["bets"]
        results, checked, refused = {}, {}, []
        for index, item in enumerate(items):
            try:
                data = validated(s.BetPlaceSerializer, item)  # its errors worded as the single endpoint's
            except ValidationError as error:
                results[index] = {"status": status.HTTP_400_BAD_REQUEST, "errors": error.detail}
                refused.append(error)
                continue
            checked[index] = {"account_external_id": data["account"], "bet_type": data["bet_type"],
                              "stake": data["stake"], "idempotency_key": data["idempotency_key"]}
        try:
            outcomes = get_or_404(services.bets_place, round_id=round_id, items=checked, client=request.user)
        except Exception as error:
            bets_answered.send(sender=Bet, accepted=(), refused=[*refused, *[error] * len(checked)],
                               bulk_size=len(items))
            raise
        accepted = []
        for index, outcome in outcomes.items():
            if outcome.error is None:
                results[index] = {"status": status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK,
                                  "bet": represented(s.BetSerializer, outcome.bet)}
                if outcome.created:
                    accepted.append(outcome.bet)
            else:
                code, errors = error_status_and_body(outcome.error)
                results[index] = {"status": code, "errors": errors}
                refused.append(outcome.error)
        bets_answered.send(sender=Bet, accepted=accepted, refused=refused, bulk_size=len(items))
        return Response({"results": [results[index] for index in range(len(items))]})


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
    permission_classes = [RolePermission, FreshSecondFactor]

    @extend_schema(tags=["rounds"], summary="Void an open or dealt round, refunding every pending bet",
                   request=s.RoundVoidSerializer,
                   responses={200: s.RoundRecallSerializer, **HELD, **ERRORS, **NOT_FOUND, **CONFLICT})
    def post(self, request, round_id):
        round_ = get_or_404(selectors.round_get, round_id=round_id)
        data = validated(s.RoundVoidSerializer, request.data)
        outcome = submit(services.round_void, round_id=round_.pk, actor=request.user, reason=data["reason"])
        if isinstance(outcome, Held):
            return held_response(outcome)
        return Response(s.RoundRecallSerializer(selectors.round_recall(round_id=round_.pk)).data)


class RoundVerifyView(KeyLookupView):
    required_permissions = {"GET": "games.verify_round"}

    @extend_schema(tags=["rounds"], summary="Recompute the round from its revealed seed and compare",
                   responses={200: s.VerificationSerializer, **READ_ERRORS, **NOT_FOUND, **CONFLICT})
    def get(self, request, round_id):
        round_ = get_or_404(selectors.round_get, using=self.read_db, round_id=round_id)
        return Response(selectors.round_verification(round_=round_))


# --- Bets ---------------------------------------------------------------------------------------


class BetListView(ApiView):
    required_permissions = {"GET": "games.view_bet"}

    @extend_schema(tags=["bets"], summary="Bets, newest first, filtered", parameters=[s.BetFilterSerializer],
                   responses={200: s.BetSerializer(many=True), **ERRORS})
    def get(self, request):
        filters = validated(s.BetFilterSerializer, request.query_params)
        return self.paginate(selectors.bet_list(using=self.read_db, filters=filters), s.BetSerializer)


class BetDetailView(KeyLookupView):
    required_permissions = {"GET": "games.view_bet"}

    @extend_schema(tags=["bets"], summary="A bet", responses={200: s.BetSerializer, **READ_ERRORS, **NOT_FOUND})
    def get(self, request, bet_id):
        return Response(represented(s.BetSerializer, get_or_404(selectors.bet_get, using=self.read_db, bet_id=bet_id)))
