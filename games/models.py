from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Round as RoundTo

from core.currencies import iso_codes_by_places, minor_places, places_in
from games.choices import BetStatus, BetType, GameStatus, Outcome, RoundStatus
from games.engine import (
    DEFAULT_MULTIPLIERS,
    MAIN_BET_TYPES,
    MAX_DECKS,
    MIN_DECKS,
    SIDE_BET_TYPES,
    Multipliers,
    headline_multiplier,
    multiplier_problem,
    side_bets_as_json,
    side_bets_problems,
)
from games.engine.payout import MAX_MULTIPLIER, MIN_MULTIPLIER, MULTIPLIER_DECIMAL_PLACES
from games.paytable_checks import paytable_valid, side_bets_valid
from games.rtp import LIMIT_FIELDS, LIMIT_NAMES, configuration_errors, policy_violations
from games.validators import (
    BET_TYPE_MAX_LENGTH,
    IDEMPOTENCY_KEY_CHECK_PATTERN,
    IDEMPOTENCY_KEY_MAX_LENGTH,
    MULTIPLIER_MAX_DIGITS,
    validate_client_seed_field,
    validate_decks,
    validate_idempotency_key,
    validate_multiplier,
    validate_side_bets,
)
from wallet.fields import money_field
from wallet.models import Account
from wallet.validators import (
    CURRENCY_CHECK_PATTERN,
    CURRENCY_MAX_LENGTH,
    MAX_STAKE,
    validate_currency,
    validate_in_currency,
    validate_stake,
)


def multiplier_field(default: Decimal, verbose_name: str) -> models.DecimalField:
    return models.DecimalField(
        verbose_name,
        max_digits=MULTIPLIER_MAX_DIGITS,
        decimal_places=MULTIPLIER_DECIMAL_PLACES,
        default=default,
        validators=[validate_multiplier],
        help_text=f"At least {MIN_MULTIPLIER}, at most {MAX_MULTIPLIER}, "
        f"{MULTIPLIER_DECIMAL_PLACES} decimal places at most.",
    )


def multiplier_in_range(name: str) -> Q:
    return Q(**{f"{name}__gte": MIN_MULTIPLIER, f"{name}__lte": MAX_MULTIPLIER})


RTP_LIMIT_MAX = Decimal("9999.9999")


def rtp_limit_field(verbose_name: str) -> models.DecimalField:
    return models.DecimalField(
        verbose_name, max_digits=8, decimal_places=4, null=True, blank=True,
        validators=[MinValueValidator(Decimal(0)), MaxValueValidator(RTP_LIMIT_MAX)],
        help_text="A percentage (e.g. 97.5000), 4 decimal places at most; empty for no limit.",
    )


class RtpPolicy(models.Model):
    """Limits of the theoretical return to player (for example a jurisdiction's) that games assigned
    to it must keep, checked exactly by games.rtp."""

    name = models.CharField(max_length=64, unique=True)
    description = models.TextField(blank=True)
    # A minimum and a maximum for every registered bet type (games.rtp.LIMIT_FIELDS).
    for _bet_type, (_low, _high) in LIMIT_FIELDS.items():
        vars()[_low] = rtp_limit_field(f"minimum {_bet_type.label} RTP %")
        vars()[_high] = rtp_limit_field(f"maximum {_bet_type.label} RTP %")
    del _bet_type, _low, _high
    max_rtp = rtp_limit_field("maximum RTP % of any bet")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    CONFIGURATION_FIELDS = ("name", "description", *LIMIT_NAMES)

    class Meta:
        ordering = ["name"]
        verbose_name = "RTP policy"
        verbose_name_plural = "RTP policies"
        constraints = [
            *(models.CheckConstraint(
                condition=Q(**{f"{name}__isnull": True}) | Q(**{f"{name}__gte": 0, f"{name}__lte": RTP_LIMIT_MAX}),
                name=f"rtp_policy_{name}_range") for name in LIMIT_NAMES),
            *(models.CheckConstraint(
                condition=Q(**{f"{low}__isnull": True}) | Q(**{f"{high}__isnull": True})
                | Q(**{f"{low}__lte": F(high)}),
                name=f"rtp_policy_{low}_le_max") for low, high in LIMIT_FIELDS.values()),
        ]

    def __str__(self):
        return self.name

    def clean(self):
        errors = {}
        for low, high in LIMIT_FIELDS.values():
            minimum, maximum = getattr(self, low), getattr(self, high)
            if minimum is not None and maximum is not None and minimum > maximum:
                errors[high] = "The maximum must be at least the minimum."
        if not errors and self.pk is not None:
            # Tightening a policy: every game assigned to it must still comply.
            for game in self.games.order_by("slug"):
                for violation in policy_violations(self, decks=game.decks, multipliers=game.multipliers,
                                                   side_bets=game.side_bets):
                    errors.setdefault(violation.limit_field, []).append(f"Game {game.slug}: {violation.message}")
        if errors:
            raise ValidationError(errors)

    def configuration(self) -> dict:
        """The policy's values as JSON-ready data, for audit."""
        return {name: (str(value) if isinstance(value, Decimal) else value)
                for name in self.CONFIGURATION_FIELDS for value in [getattr(self, name)]}


class GameInstance(models.Model):
    slug = models.SlugField(unique=True, max_length=64)
    name = models.CharField(max_length=100)
    status = models.CharField(max_length=16, choices=GameStatus.choices, default=GameStatus.ACTIVE)
    decks = models.PositiveSmallIntegerField(
        default=MAX_DECKS, validators=[validate_decks], help_text=f"{MIN_DECKS} to {MAX_DECKS}."
    )
    player_multiplier = multiplier_field(DEFAULT_MULTIPLIERS.player, "player multiplier")
    banker_multiplier = multiplier_field(DEFAULT_MULTIPLIERS.banker, "banker multiplier")
    tie_multiplier = multiplier_field(DEFAULT_MULTIPLIERS.tie, "tie multiplier")
    min_bet = money_field("minimum bet", validators=[validate_stake])
    max_bet = money_field("maximum bet", validators=[validate_stake], help_text=f"At most {MAX_STAKE}.")
    currency = models.CharField(max_length=CURRENCY_MAX_LENGTH, default="USD", validators=[validate_currency],
                                help_text="ISO 4217, or a code of settings.CURRENCY_MINOR_UNITS; the bet limits "
                                "and stakes have at most its decimal places.")
    side_bets = models.JSONField(
        default=dict, blank=True, validators=[validate_side_bets],
        help_text="The side bets the game offers, each with its paytable: {bet type: {event: multiplier}}, "
        "multipliers as decimal text (stake included, at least 1.0; a push exactly 1.0; an event not listed "
        'loses). For example {"PLAYER_PAIR": {"PAIR": "12"}}. Empty for none.',
    )
    rtp_policy = models.ForeignKey(RtpPolicy, on_delete=models.PROTECT, null=True, blank=True,
                                   related_name="games", verbose_name="RTP policy",
                                   help_text="The payouts must keep this policy's RTP limits; empty for none.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # The fields an operator configures; a change of any of them is audited with a reason.
    CONFIGURATION_FIELDS = (
        "name", "status", "decks", "player_multiplier", "banker_multiplier", "tie_multiplier",
        "min_bet", "max_bet", "currency", "side_bets", "rtp_policy",
    )

    class Meta:
        ordering = ["slug"]
        permissions = [("rotate_seeds", "Can rotate the seed pair of a game")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=GameStatus.values), name="game_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(decks__gte=MIN_DECKS, decks__lte=MAX_DECKS), name="game_decks_1_to_8"
            ),
            models.CheckConstraint(
                condition=multiplier_in_range("player_multiplier"), name="game_player_multiplier_range"
            ),
            models.CheckConstraint(
                condition=multiplier_in_range("banker_multiplier"), name="game_banker_multiplier_range"
            ),
            models.CheckConstraint(
                condition=multiplier_in_range("tie_multiplier"), name="game_tie_multiplier_range"
            ),
            models.CheckConstraint(condition=Q(min_bet__gt=0), name="game_min_bet_positive"),
            models.CheckConstraint(condition=Q(min_bet__lte=F("max_bet")), name="game_min_bet_le_max_bet"),
            models.CheckConstraint(condition=Q(max_bet__lte=MAX_STAKE), name="game_max_bet_within_max_stake"),
            models.CheckConstraint(
                condition=Q(currency__regex=CURRENCY_CHECK_PATTERN), name="game_currency_code"
            ),
            models.CheckConstraint(condition=side_bets_valid("side_bets"), name="game_side_bets_valid"),
            # The limits of an ISO 4217 currency have at most its places (a configured currency's
            # are the model's and the forms' to check: settings can change, a constraint cannot).
            *(models.CheckConstraint(
                condition=~Q(currency__in=codes)
                | Q(min_bet=RoundTo("min_bet", places), max_bet=RoundTo("max_bet", places)),
                name=f"game_limits_in_{places}_places") for places, codes in iso_codes_by_places().items()),
        ]

    def __str__(self):
        return self.slug

    # The field holding each bet type's multiplier, for SQL that picks it (games/writes.py).
    MULTIPLIER_FIELDS = {BetType.PLAYER: "player_multiplier", BetType.BANKER: "banker_multiplier",
                         BetType.TIE: "tie_multiplier"}

    @property
    def multipliers(self) -> Multipliers:
        return Multipliers(self.player_multiplier, self.banker_multiplier, self.tie_multiplier)

    def offers(self, bet_type: str) -> bool:
        """Whether the game takes ``bet_type``: a main bet always, a side bet once it has a paytable."""
        return bet_type in MAIN_BET_TYPES or bet_type in self.side_bets

    def terms(self, bet_type: str) -> tuple:
        """(multiplier, paytable) of a bet of ``bet_type`` accepted now: a main bet's multiplier and no
        paytable; a side bet's paytable and its highest multiplier (games/writes.py reads the same in SQL)."""
        if bet_type in MAIN_BET_TYPES:
            return self.multipliers.for_bet(bet_type), None
        paytable = self.side_bets[bet_type]
        return headline_multiplier(paytable), paytable

    def clean_fields(self, exclude=None):
        # Side bets are stored in one form (bets copy a paytable as it is), multipliers as decimal
        # text: normalised before the field's own check, which would refuse a Decimal as not JSON.
        if not side_bets_problems(self.side_bets):
            self.side_bets = side_bets_as_json(self.side_bets)
        super().clean_fields(exclude)

    def clean(self):
        if self.min_bet is not None and self.max_bet is not None and self.min_bet > self.max_bet:
            raise ValidationError({"max_bet": "The maximum bet must be at least the minimum bet."})
        self._limits_in_currency()
        # The ceiling of every game (settings.MAX_GAME_RTP) when its payouts are new or change (a game
        # left above a ceiling lowered since can still be renamed or suspended), and the limits of its
        # policy if it has one; once the payouts are valid (a bad one is its field's own error).
        if self._payouts_valid():
            policy = self.rtp_policy if self.rtp_policy_id is not None else None
            errors = configuration_errors(policy, decks=self.decks, multipliers=self.multipliers,
                                          ceiling=self._payouts() != getattr(self, "_stored_payouts", None),
                                          side_bets=self.side_bets)
            if errors:
                raise ValidationError(errors)

    def _limits_in_currency(self) -> None:
        """The bet limits are amounts of the game's currency: no more places than it has."""
        errors = {}
        for name in ("min_bet", "max_bet"):
            value = getattr(self, name)
            if isinstance(value, Decimal) and value.is_finite() and isinstance(self.currency, str):
                try:
                    validate_in_currency(value, self.currency)
                except ValidationError as error:
                    errors[name] = error.messages
        if errors:
            raise ValidationError(errors)

    @classmethod
    def from_db(cls, db, field_names, values):
        game = super().from_db(db, field_names, values)
        game._stored_payouts = game._payouts()  # as stored: clean() tells a change of the payouts
        return game

    def _payouts(self) -> tuple:
        return tuple(self.__dict__.get(name) for name in ("decks", *self.MULTIPLIER_FIELDS.values(), "side_bets"))

    def _payouts_valid(self) -> bool:
        if isinstance(self.decks, bool) or not isinstance(self.decks, int) or not MIN_DECKS <= self.decks <= MAX_DECKS:
            return False
        return (all(isinstance(value, Decimal) and multiplier_problem(value) is None for value in self.multipliers)
                and not side_bets_problems(self.side_bets))

    def configuration(self) -> dict:
        """The configured values as JSON-ready data (decimals at their column's scale), for audit."""
        values = {}
        for name in self.CONFIGURATION_FIELDS:
            value = getattr(self, name)
            if isinstance(value, RtpPolicy):
                value = value.name
            elif isinstance(value, Decimal):
                # Money at its currency's places (USD 10.00, JPY 100), a multiplier at its column's.
                places = (max(minor_places(self.currency), places_in(value)) if name in ("min_bet", "max_bet")
                          else self._meta.get_field(name).decimal_places)
                value = str(value.quantize(Decimal(1).scaleb(-places)))
            values[name] = value
        return values


class SeedPair(models.Model):
    """A server seed committed by its hash, a client seed and a nonce counter (PF-1 lifecycle).

    The server seed stays on the server until the pair is revealed; ``revealed_server_seed`` is the
    only accessor that pages and the API use.
    """

    game = models.ForeignKey(GameInstance, on_delete=models.PROTECT, related_name="seed_pairs")
    server_seed = models.CharField(max_length=64, editable=False)
    server_seed_hash = models.CharField(max_length=64, editable=False)
    client_seed = models.CharField(max_length=64, validators=[validate_client_seed_field])
    next_nonce = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When a newer pair took over; it opens no round from then on and is revealed once "
        "its last open round is dealt or voided.")
    revealed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["game"], condition=Q(retired_at__isnull=True),
                name="one_active_seed_pair_per_game",
            ),
            # A pair is revealed only once retired.
            models.CheckConstraint(
                condition=Q(revealed_at__isnull=True) | Q(retired_at__isnull=False, revealed_at__gte=F("retired_at")),
                name="seed_pair_revealed_after_retired",
            ),
            models.CheckConstraint(condition=Q(next_nonce__gte=0), name="seed_pair_nonce_non_negative"),
            models.CheckConstraint(
                condition=Q(server_seed__regex=r"^[0-9a-f]{64}$"), name="seed_pair_server_seed_hex"
            ),
            models.UniqueConstraint(fields=["server_seed_hash"], name="seed_pair_hash_unique"),
        ]

    def __str__(self):
        return f"{self.game.slug} seed {self.server_seed_hash[:12]}…"

    def __repr__(self):
        return f"<SeedPair {self.pk} {self.server_seed_hash[:12]} revealed={self.is_revealed}>"

    @property
    def is_active(self) -> bool:
        return self.retired_at is None

    @property
    def is_revealed(self) -> bool:
        return self.revealed_at is not None

    @property
    def revealed_server_seed(self):
        return self.server_seed if self.is_revealed else None


class Round(models.Model):
    game = models.ForeignKey(GameInstance, on_delete=models.PROTECT, related_name="rounds")
    seed_pair = models.ForeignKey(SeedPair, on_delete=models.PROTECT, related_name="rounds")
    nonce = models.BigIntegerField()
    decks = models.PositiveSmallIntegerField(validators=[validate_decks])
    status = models.CharField(max_length=8, choices=RoundStatus.choices, default=RoundStatus.OPEN)
    cards = models.JSONField(default=list, blank=True, help_text="Labels in dealt order.")
    player_cards = models.JSONField(default=list, blank=True)
    banker_cards = models.JSONField(default=list, blank=True)
    player_score = models.PositiveSmallIntegerField(null=True, blank=True)
    banker_score = models.PositiveSmallIntegerField(null=True, blank=True)
    natural = models.BooleanField(null=True, blank=True)
    # NULL until dealt: round_outcome_matches_status tells "not dealt" from any outcome by it.
    outcome = models.CharField(max_length=8, choices=Outcome.choices, null=True, blank=True)  # noqa: DJ001
    opened_at = models.DateTimeField(auto_now_add=True)
    dealt_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)
    voided_at = models.DateTimeField(null=True, blank=True)
    void_reason = models.TextField(blank=True)
    settlement_failures = models.PositiveSmallIntegerField(
        default=0, help_text="Failed settlement attempts; the sweep skips a round that failed too often."
    )

    class Meta:
        ordering = ["-id"]
        permissions = [
            ("open_round", "Can open rounds"),
            ("deal_round", "Can deal rounds"),
            ("void_round", "Can void rounds"),
            ("verify_round", "Can verify rounds"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["seed_pair", "nonce"], name="round_nonce_unique_per_seed_pair"),
            models.CheckConstraint(condition=Q(status__in=RoundStatus.values), name="round_status_valid"),
            models.CheckConstraint(condition=Q(nonce__gte=0), name="round_nonce_non_negative"),
            models.CheckConstraint(
                condition=Q(decks__gte=MIN_DECKS, decks__lte=MAX_DECKS), name="round_decks_1_to_8"
            ),
            # A round has an outcome exactly when it has been dealt (and possibly settled).
            models.CheckConstraint(
                condition=(
                    Q(status__in=[RoundStatus.DEALT, RoundStatus.SETTLED], outcome__isnull=False,
                      outcome__in=Outcome.values, dealt_at__isnull=False)
                    | Q(status=RoundStatus.OPEN, outcome__isnull=True)
                    | Q(status=RoundStatus.VOID, voided_at__isnull=False)
                ),
                name="round_outcome_matches_status",
            ),
            models.CheckConstraint(
                condition=Q(player_score__isnull=True, banker_score__isnull=True)
                | Q(player_score__isnull=False, banker_score__isnull=False, player_score__lte=9, banker_score__lte=9),
                name="round_scores_0_to_9",
            ),
            models.CheckConstraint(
                condition=~Q(status=RoundStatus.SETTLED) | Q(settled_at__isnull=False),
                name="round_settled_has_time",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "dealt_at"], name="round_status_dealt_idx"),
            models.Index(fields=["status", "id"], name="round_status_id_idx"),
            # A game's rounds, newest first: read backwards (ascending, it is appended to, so packed).
            models.Index(fields=["game", "opened_at"], name="round_game_opened_at_idx"),
            # The admin's round filters: the shoe sizes played by a loose index scan, and the first
            # 10,000 rounds of an outcome counted from the index alone.
            models.Index(fields=["decks"], name="round_decks_filter_idx"),
            models.Index(fields=["outcome", "id"], name="round_outcome_filter_idx"),
        ]

    def __str__(self):
        return f"Round {self.pk} ({self.game.slug}, nonce {self.nonce})"


UNPAID_BET_STATUSES = (BetStatus.PENDING, BetStatus.HELD)


class Bet(models.Model):
    """A bet on a round. Its idempotency key is unique per client by the primary key of BetKey, a
    table of its own written with every bet (not a unique index here: see BetKey)."""

    # No index of their own on the three foreign keys: the indexes below lead with each of them, and
    # every index is one more write on every bet (and a single-column one lures the planner into
    # reading all of a client's bets to find a few idempotency keys).
    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="bets", db_index=False)
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="bets", db_index=False)
    client = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="bets_placed", db_index=False,
        help_text="The integration client that placed the bet.",
    )
    bet_type = models.CharField(max_length=BET_TYPE_MAX_LENGTH, choices=BetType.choices)
    stake = money_field("stake", validators=[validate_stake])
    multiplier = models.DecimalField(
        max_digits=MULTIPLIER_MAX_DIGITS, decimal_places=MULTIPLIER_DECIMAL_PLACES,
        validators=[validate_multiplier], help_text="The multiplier in force when the bet was accepted; a "
        "side bet's is its paytable's highest.",
    )
    # A side bet's paytable in force when it was accepted (it settles on it); NULL for a main bet,
    # which settles on its multiplier.
    paytable = models.JSONField(null=True, blank=True, help_text="A side bet's paytable when it was accepted.")
    idempotency_key = models.CharField(max_length=IDEMPOTENCY_KEY_MAX_LENGTH, validators=[validate_idempotency_key])
    status = models.CharField(max_length=8, choices=BetStatus.choices, default=BetStatus.PENDING)
    payout = money_field("payout", null=True, blank=True, help_text="Returned, stake included.")
    placed_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)
    # Why settlement could not write this bet (kept once an operator settles it, as its history). The
    # database default serves the statements that insert bets directly (games.writes).
    hold_reason = models.TextField(blank=True, default="", db_default="",
                                   help_text="Why its settlement failed, when it was held.")
    held_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        permissions = [("place_bet", "Can place bets"), ("settle_held_bet", "Can settle held bets")]
        constraints = [
            models.CheckConstraint(condition=Q(bet_type__in=BetType.values), name="bet_type_valid"),
            # A main bet settles on its multiplier; a side bet on a paytable of its own bet type.
            models.CheckConstraint(
                condition=Q(bet_type__in=MAIN_BET_TYPES, paytable__isnull=True) | Q(*(
                    Q(bet_type=name, paytable__isnull=False) & paytable_valid("paytable", name)
                    for name in SIDE_BET_TYPES), _connector=Q.OR),
                name="bet_paytable_of_its_type",
            ),
            models.CheckConstraint(condition=Q(idempotency_key__regex=IDEMPOTENCY_KEY_CHECK_PATTERN),
                                   name="bet_idempotency_key_visible_ascii"),
            models.CheckConstraint(condition=Q(status__in=BetStatus.values), name="bet_status_valid"),
            models.CheckConstraint(condition=Q(stake__gt=0), name="bet_stake_positive"),
            models.CheckConstraint(condition=multiplier_in_range("multiplier"), name="bet_multiplier_range"),
            # A pending or held bet has no payout yet; a settled or refunded one has one, never negative.
            models.CheckConstraint(
                condition=Q(status__in=UNPAID_BET_STATUSES, payout__isnull=True)
                | Q(~Q(status__in=UNPAID_BET_STATUSES), payout__isnull=False, payout__gte=0,
                    settled_at__isnull=False),
                name="bet_payout_matches_status",
            ),
            # A held bet says why, and since when.
            models.CheckConstraint(
                condition=~Q(status=BetStatus.HELD) | Q(~Q(hold_reason=""), held_at__isnull=False),
                name="bet_held_has_reason",
            ),
            models.CheckConstraint(
                condition=~Q(status=BetStatus.LOST) | Q(payout=0), name="bet_lost_pays_nothing"
            ),
            models.CheckConstraint(
                condition=~Q(status__in=[BetStatus.PUSH, BetStatus.REFUNDED]) | Q(payout=F("stake")),
                name="bet_push_and_refund_return_stake",
            ),
        ]
        indexes = [
            models.Index(fields=["round", "status"], name="bet_round_status_idx"),
            models.Index(fields=["account", "-id"], name="bet_account_idx"),
            # Ascending, so appended to and packed (wallet's ledger_kind_id_idx); read backwards.
            models.Index(fields=["status", "id"], name="bet_status_id_idx"),
            # The admin's search by key (BetKey's primary key leads with the client).
            models.Index(fields=["idempotency_key"], name="bet_idempotency_key_idx"),
        ]

    def __str__(self):
        return f"Bet {self.pk}: {self.bet_type} {self.stake} on round {self.round_id}"


class BetKey(models.Model):
    """A bet's idempotency key, unique per client for ever: the database's primary key (client, key).

    Written with its bet in the same statement or transaction by every path that places bets
    (games.writes for a single bet, either way, and bulk bets in games.services): a reused key fails
    that write with an IntegrityError on ``games_betkey_pkey``, and a replay finds the earlier bet
    here. A table of its own rather than a unique index on the bets, so that the bets can be
    partitioned by month (every unique index of a partitioned table must hold its partition key);
    the keys of archived bets stay. No foreign keys: each would cost a check per bet, and a key
    outlives an archived bet.
    """

    pk = models.CompositePrimaryKey("client_id", "idempotency_key")
    client = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, related_name="+",
                               db_index=False, db_constraint=False)
    idempotency_key = models.CharField(max_length=IDEMPOTENCY_KEY_MAX_LENGTH)
    bet = models.ForeignKey(Bet, on_delete=models.DO_NOTHING, related_name="+", db_index=False,
                            db_constraint=False)

    def __str__(self):
        return f"{self.idempotency_key} → bet {self.bet_id}"
