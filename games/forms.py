"""Admin forms: the game configuration form, its return-to-player preview, and the reason forms.

Validation lives where it always does (the model's validators and ``clean``, which a ModelForm
runs); the forms only add what the admin needs on top: a required reason on every change, the
client seed on creation, and the exact return to player of the configuration being entered.
"""

from decimal import Decimal, InvalidOperation
from fractions import Fraction

from django import forms
from django.core.exceptions import ValidationError

from audit.forms import ReasonForm
from backoffice.formatting import money, percent
from backoffice.forms import ExactDecimalFormField
from core.currencies import in_places
from games.choices import BetType
from games.engine import (
    MAX_DECKS,
    MIN_DECKS,
    REGISTRY,
    Multipliers,
    Pf1InputError,
    bet_odds,
    bet_rtp,
    exact_odds,
    make_paytable,
    multiplier_problem,
    return_to_player,
    validate_client_seed,
    validate_nonce,
    validate_server_seed,
)
from games.engine.payout import MAX_MULTIPLIER, MIN_MULTIPLIER, MULTIPLIER_DECIMAL_PLACES
from games.models import GameInstance, RtpPolicy
from games.rtp import HIGHEST_FIELD, LIMIT_FIELDS, MULTIPLIER_FIELDS, SIDE_BETS_FIELD, policy_violations
from games.side_bet_forms import SideBetsFormField, checked_side_bets
from games.validators import validate_client_seed_field, validate_multiplier
from wallet.validators import CURRENCY_MAX_LENGTH, MAX_STAKE

PERCENT_PLACES = 4


# --- Return to player preview ---------------------------------------------------------------------

def rtp_percent(value: Fraction) -> str:
    """An exact fraction as the preview shows it: "98.9421"."""
    return percent(value, PERCENT_PLACES)


def _parse_decks(raw):
    try:
        decks = int(str(raw).strip())
    except (TypeError, ValueError):
        return None, "Enter a whole number of decks."
    if not MIN_DECKS <= decks <= MAX_DECKS:
        return None, f"A shoe holds {MIN_DECKS} to {MAX_DECKS} decks."
    return decks, None


def _parse_multiplier(raw):
    if isinstance(raw, Decimal):
        value = raw
    else:
        try:
            value = Decimal(str(raw).strip())
        except (InvalidOperation, TypeError, ValueError):
            return None, "A multiplier must be a decimal number."
    problem = multiplier_problem(value)
    if problem:
        return None, f"A multiplier {problem}."
    return value, None


def rtp_policy_from(raw) -> RtpPolicy | None:
    """The policy a form or a preview request names by id (None for none, or for an unknown id)."""
    if isinstance(raw, RtpPolicy) or raw is None:
        return raw
    raw = str(raw).strip()
    return RtpPolicy.objects.filter(pk=int(raw)).first() if raw.isdigit() and len(raw) < 19 else None


def rtp_preview(*, decks, player, banker, tie, side_bets=None, policy: RtpPolicy | None = None) -> dict:
    """The exact odds and return to player of a configuration, from raw (possibly bad) input.

    ``side_bets`` is the game's ({side bet: paytable}) or JSON text of it; each side bet offered gets
    its row after the three main bets. The figures are exact fractions rounded only for display;
    ``exact`` keeps each as numerator/denominator. ``errors`` names each input that is not valid, by
    form field.
    """
    errors = {}
    decks_value, problem = _parse_decks(decks)
    if problem:
        errors["decks"] = problem
    multipliers = {}
    for bet_type, raw in ((BetType.PLAYER, player), (BetType.BANKER, banker), (BetType.TIE, tie)):
        value, problem = _parse_multiplier(raw)
        if problem:
            errors[MULTIPLIER_FIELDS[bet_type]] = problem
        multipliers[bet_type] = value
    side_bets, problems = checked_side_bets(side_bets)
    if problems:
        errors[SIDE_BETS_FIELD] = " ".join(problems)
    if errors:
        return {"ok": False, "errors": errors, "bets": [], "over_100": False, "warning": "",
                "policy": None, "policy_errors": []}
    odds = exact_odds(decks_value)
    config = Multipliers(multipliers[BetType.PLAYER], multipliers[BetType.BANKER], multipliers[BetType.TIE])
    win_probability = {BetType.PLAYER: odds.player, BetType.BANKER: odds.banker, BetType.TIE: odds.tie}
    bets = []
    for bet_type in (BetType.PLAYER, BetType.BANKER, BetType.TIE):
        rtp = return_to_player(odds, bet_type.value, config)
        bets.append(_bet_row(bet_type, str(config.for_bet(bet_type.value)), win_probability[bet_type], rtp, policy))
    bets += _side_bet_rows(decks_value, side_bets, policy)
    violations = [] if policy is None else policy_violations(policy, decks=decks_value, multipliers=config,
                                                             side_bets=side_bets)
    for bet in bets:
        bet["outside_policy"] = any(violation.bet_type == bet["bet_type"] for violation in violations)
    over = [bet["label"] for bet in bets if bet["over_100"]]
    warning = ""
    if over:
        warning = (f"The return to player exceeds 100 % on {', '.join(over)}: the house loses money on "
                   f"{'this bet' if len(over) == 1 else 'these bets'} in the long run.")
    return {
        "ok": True,
        "errors": {},
        "decks": decks_value,
        "probabilities": {"player": rtp_percent(odds.player), "banker": rtp_percent(odds.banker),
                          "tie": rtp_percent(odds.tie)},
        "bets": bets,
        "over_100": bool(over),
        "warning": warning,
        "policy": None if policy is None else {"name": policy.name, "max_rtp": _limit(policy, HIGHEST_FIELD)},
        "policy_errors": [violation.message for violation in violations],
    }


def _bet_row(bet_type: BetType, multiplier: str, wins: Fraction, rtp: Fraction, policy, side: bool = False) -> dict:
    return {
        "bet_type": bet_type.value,
        "label": bet_type.label,
        "side": side,
        "multiplier": multiplier,
        "win_probability": rtp_percent(wins),
        "rtp": rtp_percent(rtp),
        "house_edge": rtp_percent(1 - rtp),
        "rtp_exact": f"{rtp.numerator}/{rtp.denominator}",
        "over_100": rtp > 1,
        **_policy_limits(policy, bet_type),
    }


def _side_bet_rows(decks: int, side_bets: dict, policy) -> list:
    """A side bet's row: its paytable for a multiplier ("PAIR 12"), the probability that it pays more
    than a push, and its exact RTP for the shoe."""
    if not side_bets:
        return []
    counts = bet_odds(decks)
    rows = []
    for name, stored in side_bets.items():
        kind, paytable = REGISTRY[name], make_paytable(name, stored)
        paying = [event for event in paytable if event not in kind.push_events]
        rows.append(_bet_row(
            BetType(name), ", ".join(f"{event} {paytable[event]}" for event in paying),
            sum((counts[name].probability(event) for event in paying), Fraction(0)),
            bet_rtp(counts[name], paytable), policy, side=True))
    return rows


def _limit(policy, field) -> str | None:
    value = getattr(policy, field)
    return None if value is None else str(value)


def _policy_limits(policy, bet_type) -> dict:
    if policy is None:
        return {"min_rtp": None, "max_rtp": None}
    low, high = LIMIT_FIELDS[bet_type]
    return {"min_rtp": _limit(policy, low), "max_rtp": _limit(policy, high)}


# --- Game configuration ---------------------------------------------------------------------------

def _multiplier_widget():
    return forms.NumberInput(attrs={
        "step": f"{Decimal(1).scaleb(-MULTIPLIER_DECIMAL_PLACES)}",
        "min": str(MIN_MULTIPLIER), "max": str(MAX_MULTIPLIER), "class": "vTextField rtp-input",
    })


MULTIPLIER_HELP = (
    f"What a winning bet returns per unit staked, the stake included: 2.0 returns twice the stake (the stake "
    f"back and as much again, even money), 1.0 the stake only. From {MIN_MULTIPLIER} to {int(MAX_MULTIPLIER):,}, "
    f"at most {MULTIPLIER_DECIMAL_PLACES} decimal places."
)


class GameInstanceForm(forms.ModelForm):
    """Creates (with an optional client seed) or changes (with a required reason) a game.

    The admin saves it through ``games.services`` (never ``form.save()``), so every write is
    audited; validation is the model's own, run by the ModelForm, plus the reason.
    """

    client_seed = forms.CharField(
        required=False, max_length=64, strip=False,
        help_text="Client seed of the first seed pair: 1 to 64 of A-Z, a-z, 0-9, and - . _ ~ after the first "
        "character. Leave empty for a random one.",
    )
    reason = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Why the configuration changes; recorded in the audit trail. Required for any change.",
    )

    side_bets = SideBetsFormField(label="Side bets")

    # The admin sets this (per request) to the errors a service reported after validation passed,
    # so the form is shown again with them and nothing is written.
    service_errors: dict | None = None

    class Meta:
        model = GameInstance
        fields = ["slug", "name", "status", "decks", "player_multiplier", "banker_multiplier",
                  "tie_multiplier", "side_bets", "rtp_policy", "min_bet", "max_bet", "currency"]
        field_classes = {name: ExactDecimalFormField for name in (
            "player_multiplier", "banker_multiplier", "tie_multiplier", "min_bet", "max_bet")}
        widgets = {
            "player_multiplier": _multiplier_widget(),
            "banker_multiplier": _multiplier_widget(),
            "tie_multiplier": _multiplier_widget(),
            "decks": forms.NumberInput(attrs={"class": "rtp-input"}),
            "rtp_policy": forms.Select(attrs={"class": "rtp-input"}),
            "currency": forms.TextInput(attrs={"size": 6, "maxlength": CURRENCY_MAX_LENGTH,  # no inline style
                                               "class": "pf-uppercase"}),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in MULTIPLIER_FIELDS.values():
            if name in self.fields:
                field = self.fields[name]
                field.help_text = MULTIPLIER_HELP
                # The multiplier rule says what is wrong in its own words ("at most 1000"), here, before the
                # model's checks, whose digit counts of the column would repeat it in others.
                field.validators = [validate_multiplier]
        # Declared, so a ModelForm whose fields leave it out (a view-only page) would have no initial value.
        self.initial.setdefault("side_bets", self.instance.side_bets)
        if "reason" in self.fields and self.instance.pk is not None:
            self.fields["reason"].required = True
        if "decks" in self.fields:  # the model field's own bounds would show min="0"
            self.fields["decks"].widget.attrs.update({"min": MIN_DECKS, "max": MAX_DECKS})
        if "max_bet" in self.fields:  # the model's help writes the limit as a bare number
            self.fields["max_bet"].help_text = f"At most {money(MAX_STAKE)}."
        for name in ("min_bet", "max_bet"):  # at the currency's places (JPY 100), not the column's eight
            if isinstance(self.initial.get(name), Decimal) and self.instance.pk is not None:
                self.initial[name] = in_places(self.initial[name], self.instance.currency)

    def clean_client_seed(self):
        return optional_client_seed(self.cleaned_data.get("client_seed", ""))

    def clean_reason(self):
        return (self.cleaned_data.get("reason") or "").strip()

    def clean(self):
        cleaned = super().clean()
        for field, messages in (self.service_errors or {}).items():
            self.add_error(field if field in self.fields else None, messages)
        return cleaned

    def configuration(self) -> dict:
        """The validated configuration fields present on the form, for the services."""
        return {name: self.cleaned_data[name] for name in GameInstance.CONFIGURATION_FIELDS
                if name in self.cleaned_data}


def optional_client_seed(value: str):
    """An empty field means "keep/choose the default" (None); anything else must be a valid client seed."""
    if value == "":
        return None
    validate_client_seed_field(value)
    return value


# --- Intermediate action forms --------------------------------------------------------------------

class RotateSeedForm(ReasonForm):
    """The reason of a rotation (audited) and, optionally, the new pair's client seed."""

    field_order = ["reason", "client_seed"]
    client_seed = forms.CharField(
        required=False, max_length=64, strip=False,
        help_text="The new pair's client seed: 1 to 64 of A-Z, a-z, 0-9, and - . _ ~ after the first character. "
        "Leave empty to keep the current one.",
    )

    def clean_client_seed(self):
        return optional_client_seed(self.cleaned_data.get("client_seed", ""))


# --- Support tools ---------------------------------------------------------------------------------

class DateTimeLocalInput(forms.DateTimeInput):
    input_type = "datetime-local"

    def __init__(self, attrs=None):
        super().__init__(attrs, format="%Y-%m-%dT%H:%M")


class RoundRecallForm(forms.Form):
    """Find rounds for support: by id, by an account that bet on them, by game, by the time they opened.

    Criteria combine (all must match); at least one is needed. Times are UTC.
    """

    round_id = forms.IntegerField(required=False, min_value=1, max_value=2**63 - 1, label="Round id")
    account = forms.CharField(required=False, max_length=100, label="Account",
                              help_text="The player's external id (exact).")
    game = forms.ModelChoiceField(queryset=GameInstance.objects.order_by("slug"), required=False,
                                  to_field_name="slug", empty_label="Any game")
    opened_from = forms.DateTimeField(required=False, widget=DateTimeLocalInput(), label="Opened from",
                                      help_text="UTC, inclusive.")
    opened_to = forms.DateTimeField(required=False, widget=DateTimeLocalInput(), label="Opened before",
                                    help_text="UTC, exclusive.")

    CRITERIA = ("round_id", "account", "game", "opened_from", "opened_to")

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        if all(cleaned.get(name) in (None, "") for name in self.CRITERIA):
            raise ValidationError("Give a round id, an account, a game or a time range.")
        start, end = cleaned.get("opened_from"), cleaned.get("opened_to")
        if start and end and start >= end:
            self.add_error("opened_to", "Must be later than the start of the range.")
        return cleaned

    def criteria(self) -> dict:
        """The cleaned criteria as ``selectors.round_search`` takes them."""
        data = self.cleaned_data
        return {"round_id": data.get("round_id"), "account": data.get("account", "").strip(),
                "game": data.get("game"), "opened_from": data.get("opened_from"),
                "opened_to": data.get("opened_to")}


# --- The public verification page -----------------------------------------------------------------

class PublicVerifyForm(forms.Form):
    """A player's inputs to recompute a round; each checked by PF-1's own rules."""

    server_seed = forms.CharField(max_length=64, strip=True, help_text="64 lowercase hex characters, once revealed.")
    client_seed = forms.CharField(max_length=64, strip=False)
    nonce = forms.IntegerField(min_value=0)
    decks = forms.IntegerField(min_value=MIN_DECKS, max_value=MAX_DECKS, initial=MAX_DECKS)

    def clean(self):
        cleaned = super().clean()
        for field, check in (("server_seed", validate_server_seed), ("client_seed", validate_client_seed),
                             ("nonce", validate_nonce)):
            if field in cleaned:
                try:
                    check(cleaned[field])
                except Pf1InputError as error:
                    self.add_error(field, f"The {field.replace('_', ' ')} {error.message}.")
        return cleaned


class RtpPolicyForm(forms.ModelForm):
    """Creates or changes (with a required reason) an RTP policy; the model checks its limits and that
    every game assigned to it keeps them."""

    reason = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Why the limits change; recorded in the audit trail. Required for any change.",
    )
    service_errors: dict | None = None  # set by the admin when the service refused a validated form

    class Meta:
        model = RtpPolicy
        fields = list(RtpPolicy.CONFIGURATION_FIELDS)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason"].required = self.instance.pk is not None

    def clean(self):
        cleaned = super().clean()
        for field, messages in (self.service_errors or {}).items():
            self.add_error(field if field in self.fields else None, messages)
        return cleaned

    def configuration(self) -> dict:
        return {name: self.cleaned_data[name] for name in RtpPolicy.CONFIGURATION_FIELDS if name in self.cleaned_data}
