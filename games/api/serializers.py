"""Serializers: the API's input validation (one of the three layers: model, serializer, database)
and its output shapes. Money is always a decimal string.

No serializer reads ``SeedPair.server_seed``: a seed is shown only through
``SeedPair.revealed_server_seed``, which is None until the pair is revealed.
"""

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audit.validators import REASON_REQUIRED
from backoffice.api.serializers import LengthFirstListField, StrictCharField, StrictInputMixin, reason_field
from backoffice.converters import MAX_ID
from games.choices import BetStatus, BetType, Outcome, RoundStatus
from games.engine import MAX_DECKS, MIN_DECKS, Multipliers, dealt_event, side_bets_as_json, side_bets_problems
from games.models import Bet, GameInstance, Round, RtpPolicy, SeedPair
from games.rtp import configuration_errors
from games.validators import (
    CLIENT_SEED_PATTERN,
    IDEMPOTENCY_KEY_MAX_LENGTH,
    validate_client_seed_field,
    validate_idempotency_key,
)
from wallet.api.serializers import money_field
from wallet.validators import validate_stake

# --- Shared pieces ------------------------------------------------------------------------------


def client_seed_field(**kwargs) -> serializers.CharField:
    # Not trimmed: the client seed is hashed as sent, every character counts. The pattern states
    # the rule in the schema (the validator is the rule).
    kwargs.setdefault("help_text", "1 to 64 characters: A-Z, a-z, 0-9, and - . _ ~ after the first character.")
    return StrictCharField(max_length=64, min_length=1, trim_whitespace=False, allow_blank=False,
                           validators=[validate_client_seed_field, RegexValidator(CLIENT_SEED_PATTERN)], **kwargs)


class HandSerializer(serializers.Serializer):
    cards = serializers.ListField(child=serializers.CharField(), help_text="Labels such as 10H, in dealt order.")
    score = serializers.IntegerField(min_value=0, max_value=9)


@extend_schema_field(HandSerializer(allow_null=True))
class HandField(serializers.Field):
    """A hand of a dealt round as ``{cards, score}``; null before the deal."""

    def __init__(self, side: str, **kwargs):
        self.side = side
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, round_):
        score = getattr(round_, f"{self.side}_score")
        if score is None:
            return None
        return {"cards": list(getattr(round_, f"{self.side}_cards")), "score": score}


# --- Game instances -----------------------------------------------------------------------------


CONFIGURATION_FIELDS = list(GameInstance.CONFIGURATION_FIELDS)
# The model's validator says so too; these put the bounds in the schema.
DECK_BOUNDS = {"decks": {"min_value": MIN_DECKS, "max_value": MAX_DECKS}}


def rtp_policy_field(**kwargs) -> serializers.SlugRelatedField:
    if not kwargs.get("read_only"):
        kwargs["queryset"] = RtpPolicy.objects.all()
    return serializers.SlugRelatedField(
        slug_field="name", allow_null=True,
        help_text="The name of the RTP policy whose limits the payouts must keep; null for none.", **kwargs)


PAYTABLE_SCHEMA = {"type": "object", "additionalProperties": {"type": "string"},
                   "description": "Event → multiplier (decimal text, stake included); an event not listed loses."}


@extend_schema_field({"type": "object", "additionalProperties": PAYTABLE_SCHEMA,
                      "description": "Side bet type → its paytable; empty for none."})
class SideBetsField(serializers.JSONField):
    """A game's side bets, checked by the engine's rule (the model's validator says the same) and
    given on in the form the model stores: multipliers as decimal text, push events at 1."""

    def to_internal_value(self, data):
        # Not JSONField's own check, which dumps the data with the json module: the parser reads a
        # number as an exact Decimal, which the module cannot dump, and which a multiplier may be.
        problems = side_bets_problems(data)
        if problems:
            raise serializers.ValidationError([f"{where}: {problem}." for where, problem in problems.items()])
        return side_bets_as_json(data)


class GameSerializer(serializers.ModelSerializer):
    rtp_policy = rtp_policy_field(read_only=True)
    side_bets = SideBetsField(read_only=True)

    class Meta:
        model = GameInstance
        fields = ["slug", *CONFIGURATION_FIELDS, "created_at", "updated_at"]
        read_only_fields = fields


def _check_bet_limits(min_bet, max_bet) -> None:
    if min_bet is not None and max_bet is not None and min_bet > max_bet:
        raise serializers.ValidationError({"max_bet": ["The maximum bet must be at least the minimum bet."]})


PAYOUT_FIELDS = ("decks", "player_multiplier", "banker_multiplier", "tie_multiplier", "side_bets")


def _check_rtp_policy(attrs, current) -> None:
    """The payouts under the ceiling of every game (settings.MAX_GAME_RTP: a new game's, or payouts that
    change) and inside the game's RTP policy; errors under ``rtp_policy`` when only the policy is sent."""
    value = {name: attrs[name] if name in attrs else getattr(current, name, None)
             for name in (*PAYOUT_FIELDS, "rtp_policy")}
    if current is None:
        defaults = GameInstance()
        value.update({name: getattr(defaults, name) for name in PAYOUT_FIELDS if name not in attrs})
    only_policy = "rtp_policy" in attrs and not any(name in attrs for name in PAYOUT_FIELDS)
    errors = configuration_errors(
        value["rtp_policy"], decks=value["decks"], field="rtp_policy" if only_policy else None,
        multipliers=Multipliers(value["player_multiplier"], value["banker_multiplier"], value["tie_multiplier"]),
        ceiling=current is None or any(attrs[name] != getattr(current, name) for name in PAYOUT_FIELDS
                                       if name in attrs),
        side_bets=value["side_bets"])
    if errors:
        raise serializers.ValidationError(errors)


class GameCreateSerializer(StrictInputMixin, serializers.ModelSerializer):
    """A new game instance. Field rules come from the model (validators, digits, places, choices)."""

    client_seed = client_seed_field(required=False, write_only=True)
    rtp_policy = rtp_policy_field(required=False)
    side_bets = SideBetsField(required=False)
    reason = reason_field(required=False, write_only=True,
                          help_text="Why; recorded in the audit trail. Required when the new game needs a second "
                                    "person (an active game, under APPROVAL_ACTIONS' game.create).")

    class Meta:
        model = GameInstance
        fields = ["slug", *CONFIGURATION_FIELDS, "created_at", "updated_at", "client_seed", "reason"]
        read_only_fields = ["created_at", "updated_at"]  # named, so that sending one says so
        extra_kwargs = DECK_BOUNDS

    def validate(self, attrs):
        _check_bet_limits(attrs.get("min_bet"), attrs.get("max_bet"))
        _check_rtp_policy(attrs, None)
        return attrs


class GameUpdateSerializer(StrictInputMixin, serializers.ModelSerializer):
    """A change of configuration (PATCH): any configurable field, and a reason (required)."""

    reason = reason_field(write_only=True)
    rtp_policy = rtp_policy_field(required=False)
    side_bets = SideBetsField(required=False)

    class Meta:
        model = GameInstance
        fields = ["slug", *CONFIGURATION_FIELDS, "created_at", "updated_at", "reason"]
        read_only_fields = ["slug", "created_at", "updated_at"]  # named, so that sending one says so
        extra_kwargs = DECK_BOUNDS

    def validate(self, attrs):
        if "reason" not in attrs:
            raise serializers.ValidationError({"reason": [REASON_REQUIRED]})
        current = self.instance
        _check_bet_limits(attrs.get("min_bet", getattr(current, "min_bet", None)),
                          attrs.get("max_bet", getattr(current, "max_bet", None)))
        _check_rtp_policy(attrs, current)
        return attrs


class OddsProbabilitiesSerializer(serializers.Serializer):
    player = serializers.FloatField()
    banker = serializers.FloatField()
    tie = serializers.FloatField()


# Built with type(): one of its fields is called "return", a Python keyword.
EventOddsSerializer = type("EventOddsSerializer", (serializers.Serializer,), {
    "event": serializers.CharField(),
    "settlement": serializers.ChoiceField(choices=["WIN", "PUSH", "LOSE"]),
    "multiplier": serializers.CharField(help_text="Decimal text; 0 for a losing event."),
    "combinations": serializers.IntegerField(help_text="Deals on which the event happens, out of `deals`."),
    "probability": serializers.FloatField(),
    "return": serializers.FloatField(help_text="probability × multiplier"),
})


class BetOddsSerializer(serializers.Serializer):
    events = EventOddsSerializer(many=True)
    rtp = serializers.FloatField()
    house_edge = serializers.FloatField()


class OddsSerializer(serializers.Serializer):
    """Exact odds of a shoe and the return to player of each bet (the shape of ``manage.py odds --json``)."""

    decks = serializers.IntegerField()
    probabilities = OddsProbabilitiesSerializer()
    rtp = OddsProbabilitiesSerializer(help_text="Expected return per unit staked, by bet type.")
    deals = serializers.IntegerField(help_text="Every ordered deal of six cards from the shoe: the combinations' sum.")
    bets = serializers.DictField(child=BetOddsSerializer(), help_text="Every bet type the game offers, main and side, "
                                 "under its paytable: each event's exact number of deals, probability and multiplier.")
    policy = serializers.DictField(
        allow_null=True, child=serializers.CharField(allow_null=True),
        help_text="The game's RTP policy: its name and limits in percent (min_player_rtp … max_rtp); null for none.")


# --- Seed pairs ---------------------------------------------------------------------------------


class ActiveSeedPairSerializer(serializers.ModelSerializer):
    """The committed pair: its hash is public, its server seed is not."""

    class Meta:
        model = SeedPair
        fields = ["id", "server_seed_hash", "client_seed", "next_nonce", "created_at"]
        read_only_fields = fields


class RevealedSeedPairSerializer(serializers.ModelSerializer):
    server_seed = serializers.CharField(source="revealed_server_seed", read_only=True, allow_null=True)
    rounds_played = serializers.IntegerField(source="next_nonce", read_only=True,
                                             help_text="Nonces 0 to rounds_played - 1 were used.")

    class Meta:
        model = SeedPair
        fields = ["id", "server_seed_hash", "server_seed", "client_seed", "rounds_played",
                  "created_at", "revealed_at"]
        read_only_fields = fields


class SeedsSerializer(serializers.Serializer):
    active = ActiveSeedPairSerializer(allow_null=True)
    revealed = RevealedSeedPairSerializer(many=True)
    next = serializers.URLField(allow_null=True, help_text="The next page of revealed pairs.")
    previous = serializers.URLField(allow_null=True)


class SeedRotateSerializer(StrictInputMixin, serializers.Serializer):
    reason = reason_field()
    client_seed = client_seed_field(
        required=False,
        help_text="The new pair's client seed (1 to 64 characters: A-Z, a-z, 0-9, and - . _ ~ after the first); "
                  "the current one when omitted (a random one if the current one is outside that alphabet).")


class SeedRotationSerializer(serializers.Serializer):
    """200: the retired pair had no open round and is revealed now."""

    revealed = RevealedSeedPairSerializer()
    active = ActiveSeedPairSerializer()


class PendingRevealSerializer(serializers.ModelSerializer):
    """A retired pair whose seed stays secret until its last open round is dealt or voided."""

    open_rounds = serializers.IntegerField(help_text="Rounds of the pair still open; the reveal follows the last.")

    class Meta:
        model = SeedPair
        fields = ["id", "server_seed_hash", "client_seed", "next_nonce", "created_at", "retired_at", "open_rounds"]
        read_only_fields = fields


class SeedRotationPendingSerializer(serializers.Serializer):
    """202: the new pair is active; the retired one is revealed automatically once its open rounds close."""

    pending_reveal = PendingRevealSerializer()
    active = ActiveSeedPairSerializer()


# --- Bets ---------------------------------------------------------------------------------------


class BetSerializer(serializers.ModelSerializer):
    round = serializers.IntegerField(source="round_id", read_only=True)
    paytable = serializers.DictField(child=serializers.CharField(), allow_null=True, read_only=True,
                                     help_text="A side bet's paytable when it was accepted; null for a main bet.")
    game = serializers.SlugField(source="round.game.slug", read_only=True)
    account = serializers.CharField(source="account.external_id", read_only=True)
    client = serializers.CharField(source="client.username", read_only=True,
                                   help_text="The integration client that placed the bet.")
    event = serializers.SerializerMethodField(
        help_text="What the bet type's rule yields on the round's deal, the event its paytable pays on "
        "(PLAYER, PAIR, WIN_BY_5, NATURAL_TIE…); null until the round is dealt.")

    class Meta:
        model = Bet
        fields = ["id", "round", "game", "account", "bet_type", "stake", "multiplier", "paytable", "event", "status",
                  "payout", "idempotency_key", "client", "placed_at", "settled_at", "hold_reason", "held_at"]
        read_only_fields = fields

    def get_event(self, bet) -> str | None:
        round_ = bet.round  # every path that shows a bet has its round (and game) in hand already
        if round_.status == RoundStatus.OPEN:  # nothing dealt; a bet just placed has not read the cards
            return None
        return dealt_event(bet.bet_type, round_.cards, round_.player_cards, round_.banker_cards)


class BetPlaceSerializer(StrictInputMixin, serializers.Serializer):
    # Taken as sent, never trimmed: "k" and "k\t" are two keys (the second refused), not one bet
    # and its replay; an account id with a space or a control character names no account.
    account = StrictCharField(max_length=100, min_length=1, trim_whitespace=False,
                              help_text="The account's external id.")
    bet_type = serializers.ChoiceField(choices=BetType.choices)
    stake = money_field(validators=[validate_stake],
                        help_text="A decimal string with no more places than the game's currency has "
                        "(USD 2, JPY 0, KWD 3, a configured one up to 8), within the game's limits.")
    idempotency_key = StrictCharField(
        max_length=IDEMPOTENCY_KEY_MAX_LENGTH, min_length=1, trim_whitespace=False,
        validators=[validate_idempotency_key],
        help_text="1 to 100 visible ASCII characters (! to ~), unique per client; a replay with the same key "
        "and content returns the original bet, the same key with other content is refused (409).")


@extend_schema_field(BetPlaceSerializer)
class BulkBetItemField(serializers.Field):
    """One bet of a bulk request, taken as the parser read it (its numbers exact, null included): each
    is checked on its own (by BetPlaceSerializer), so one bad item gets its own error and does not
    refuse the others."""

    def __init__(self, **kwargs):
        super().__init__(allow_null=True, **kwargs)

    def to_internal_value(self, data):
        return data


class BetBulkPlaceSerializer(StrictInputMixin, serializers.Serializer):
    bets = LengthFirstListField(
        child=BulkBetItemField(), min_length=1, max_length=settings.BET_BULK_MAX_ITEMS,
        help_text=f"1 to {settings.BET_BULK_MAX_ITEMS} bets, each as the single endpoint takes it.")


class BetBulkResultSerializer(serializers.Serializer):
    status = serializers.IntegerField(
        help_text="201: accepted; 200: a replay (the original bet); otherwise the 4xx the single endpoint "
        "would answer (400 bad input, 409 a conflict).")
    bet = BetSerializer(required=False, help_text="With 201 and 200.")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()), required=False,
        help_text="With a 4xx: {field: [reason]}.")


class BetBulkResultsSerializer(serializers.Serializer):
    results = BetBulkResultSerializer(many=True, help_text="One per bet sent, in the same order.")


class BetFilterSerializer(serializers.Serializer):
    round = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID, help_text="Round id.")
    account = serializers.CharField(required=False, max_length=100, help_text="Account external id.")
    status = serializers.ChoiceField(required=False, choices=BetStatus.choices)
    game = serializers.SlugField(required=False, help_text="Game slug.")


# --- Rounds -------------------------------------------------------------------------------------


class RoundSerializer(serializers.ModelSerializer):
    game = serializers.SlugField(source="game.slug", read_only=True)
    server_seed_hash = serializers.CharField(source="seed_pair.server_seed_hash", read_only=True)
    client_seed = serializers.CharField(source="seed_pair.client_seed", read_only=True)
    cards = serializers.ListField(child=serializers.CharField(), read_only=True,
                                  help_text="Labels in dealt order; empty before the deal.")
    player = HandField("player")
    banker = HandField("banker")

    class Meta:
        model = Round
        fields = ["id", "game", "status", "nonce", "decks", "server_seed_hash", "client_seed", "cards",
                  "player", "banker", "natural", "outcome", "opened_at", "dealt_at", "settled_at",
                  "voided_at"]
        read_only_fields = fields


class RoundRecallSerializer(RoundSerializer):
    server_seed = serializers.CharField(source="seed_pair.revealed_server_seed", read_only=True,
                                        allow_null=True, help_text="Null until the seed pair is revealed.")
    seed_revealed_at = serializers.DateTimeField(source="seed_pair.revealed_at", read_only=True,
                                                 allow_null=True)
    bets = BetSerializer(many=True, read_only=True)

    class Meta(RoundSerializer.Meta):
        fields = RoundSerializer.Meta.fields + ["server_seed", "seed_revealed_at", "void_reason", "bets"]
        read_only_fields = fields


class GameRoundFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(required=False, choices=RoundStatus.choices)


class RoundFilterSerializer(GameRoundFilterSerializer):
    game = serializers.SlugField(required=False, help_text="Game slug.")


class RoundVoidSerializer(StrictInputMixin, serializers.Serializer):
    reason = reason_field()


class RoundResultSerializer(serializers.Serializer):
    server_seed_hash = serializers.CharField()
    cards = serializers.ListField(child=serializers.CharField())
    player = HandSerializer()
    banker = HandSerializer()
    natural = serializers.BooleanField()
    outcome = serializers.ChoiceField(choices=Outcome.choices)


class VerificationInputsSerializer(serializers.Serializer):
    server_seed = serializers.CharField()
    client_seed = serializers.CharField()
    nonce = serializers.IntegerField()
    decks = serializers.IntegerField()


class VerificationSerializer(serializers.Serializer):
    round = serializers.IntegerField()
    verified = serializers.BooleanField(help_text="True when the recomputed round equals the stored one.")
    mismatches = serializers.ListField(child=serializers.CharField(), help_text="Fields that differ.")
    inputs = VerificationInputsSerializer()
    stored = RoundResultSerializer()
    recomputed = RoundResultSerializer()
