"""Reads of the operations dashboard: from the daily aggregates only, never from the raw bets.

Every figure is for a period of UTC settlement days and one currency (amounts of different
currencies are never added up), for one game or all the games of that currency.
"""

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from fractions import Fraction

from django.db import DEFAULT_DB_ALIAS
from django.db.models import Max, Q, Sum

from audit.choices import AuditAction
from audit.models import AuditEvent
from backoffice.formatting import EMPTY, percent
from games.engine import BET_TYPES, MAIN_BET_TYPES, REGISTRY, Outcome, exact_odds
from games.engine.stats import chi_square_test_expected, natural_probability
from games.models import GameInstance
from settlement.aggregates import CENTS_PER_UNIT, UCENTS_PER_UNIT, minor_units_per_unit
from settlement.models import DailyBetTotals, DailyRoundTotals, ReturningAccounts
from settlement.selectors import settlement_queue

CHANGES_SHOWN = 200

_BET_SUMS = {name: Sum(name) for name in (
    "bets", "won", "lost", "pushed", "handle_cents", "paid_out_cents", "expected_return_ucents")}
_ROUND_SUMS = {name: Sum(name) for name in (
    "rounds", "player_wins", "banker_wins", "ties", "naturals", "lag_ms_sum")}


def _int(value) -> int:
    return int(value or 0)


def _money(minor_units: int, per_unit: int) -> Decimal:
    """Whole minor units of a currency (per_unit of them make one unit) as an amount of it."""
    return Decimal(minor_units).scaleb(-(len(str(per_unit)) - 1))


def _ratio(numerator, denominator):
    return None if not denominator else float(Fraction(int(numerator), int(denominator)))


def bet_types_shown(played) -> list:
    """The bet types a report lists: the main bets always, then every other bet type with play
    (``played``), in the registry's order; one no longer registered, after them."""
    played = set(played)
    shown = [name for name in BET_TYPES if name in MAIN_BET_TYPES or name in played]
    return shown + sorted(played - set(shown))


def bet_type_label(name: str) -> str:
    kind = REGISTRY.get(name)
    return kind.label if kind is not None else name


def percent_text(value, places: int = 2) -> str:
    return percent(value, places, " %")


def p_value_text(test) -> str:
    if test is None:
        return "—"
    return f"{test.p_value:.4f}" if test.p_value >= 0.0001 else f"{test.p_value:.2e}"


def duration_text(milliseconds) -> str:
    """A lag in seconds, the unit of the dashboard's chart too: 42 → "0.042 s", 95_000 → "95.0 s"."""
    if milliseconds is None:
        return "—"
    if milliseconds < 10_000:
        return f"{milliseconds / 1000:.3f} s"
    return f"{milliseconds / 1000:,.1f} s"


class Returns:
    """Handle, paid out and return to player (actual and theoretical) of figures kept in whole minor
    units of one currency (``per_unit`` of them in a unit: settlement.aggregates)."""

    handle_cents: int
    paid_out_cents: int
    expected_return_ucents: int
    per_unit: int

    @property
    def handle(self) -> Decimal:
        return _money(self.handle_cents, self.per_unit)

    @property
    def paid_out(self) -> Decimal:
        return _money(self.paid_out_cents, self.per_unit)

    @property
    def rtp(self) -> float | None:
        return _ratio(self.paid_out_cents, self.handle_cents)

    @property
    def theoretical_rtp(self) -> float | None:
        return _ratio(self.expected_return_ucents, self.handle_cents * (UCENTS_PER_UNIT // self.per_unit))

    @property
    def rtp_percent(self) -> str:
        return percent_text(self.rtp, 3)

    @property
    def theoretical_percent(self) -> str:
        return percent_text(self.theoretical_rtp, 3)


@dataclass
class Totals(Returns):
    """Rounds, bets and money of a game (or of all games) over the period."""

    label: str
    slug: str = ""
    rounds: int = 0
    bets: int = 0
    handle_cents: int = 0
    paid_out_cents: int = 0
    expected_return_ucents: int = 0
    active_accounts: int = 0
    per_unit: int = CENTS_PER_UNIT

    @property
    def ggr(self) -> Decimal:
        return _money(self.handle_cents - self.paid_out_cents, self.per_unit)

    @property
    def hold(self) -> float | None:
        """GGR / handle."""
        return _ratio(self.handle_cents - self.paid_out_cents, self.handle_cents)

    @property
    def hold_percent(self) -> str:
        return percent_text(self.hold)


@dataclass
class BetTypeReturn(Returns):
    bet_type: str
    bets: int
    won: int
    lost: int
    pushed: int
    handle_cents: int
    paid_out_cents: int
    expected_return_ucents: int
    per_unit: int = CENTS_PER_UNIT

    @property
    def label(self) -> str:
        return bet_type_label(self.bet_type)

    @property
    def difference(self) -> float | None:
        if self.rtp is None:
            return None
        return self.rtp - self.theoretical_rtp

    @property
    def difference_points(self) -> str:
        """Actual minus theoretical, in percentage points."""
        return EMPTY if self.difference is None else f"{self.difference * 100:+.3f} pt"


@dataclass
class OutcomeRow:
    name: str
    observed: int
    expected: float
    rounds: int

    @property
    def frequency(self) -> float | None:
        return self.observed / self.rounds if self.rounds else None

    @property
    def probability(self) -> float | None:
        """The exact probability (weighted by the rounds of each shoe size when they differ)."""
        return self.expected / self.rounds if self.rounds else None

    @property
    def frequency_percent(self) -> str:
        return percent_text(self.frequency, 3)

    @property
    def probability_percent(self) -> str:
        return percent_text(self.probability, 3)


@dataclass
class Dashboard:
    start: date
    end: date
    currency: str
    game: GameInstance | None
    games: list
    per_game: list
    overall: Totals
    bet_types: list
    outcomes: list
    outcome_test: object
    natural_test: object
    decks: list
    lag_avg_ms: float | None
    lag_max_ms: int
    queue: object
    changes: list
    series: dict = field(default_factory=dict)

    @property
    def outcome_p(self) -> str:
        return p_value_text(self.outcome_test)

    @property
    def natural_p(self) -> str:
        return p_value_text(self.natural_test)

    @property
    def lag_avg_text(self) -> str:
        return duration_text(self.lag_avg_ms)

    @property
    def lag_max_text(self) -> str:
        return duration_text(self.lag_max_ms if self.lag_avg_ms is not None else None)


def active_accounts(currency: str, start: date, end: date, *, game_id: int | None = None,
                    using: str = DEFAULT_DB_ALIAS) -> tuple[dict, int]:
    """({game id: distinct accounts}, distinct accounts overall) with a bet settled in the period: of
    the one game, or of each game of the currency and of any of them. Each account counts on the
    one active day of the period that follows a day before it (ReturningAccounts)."""
    rows = ReturningAccounts.objects.using(using).filter(
        Q(previous_day__isnull=True) | Q(previous_day__lt=start), currency=currency, day__gte=start, day__lte=end)
    if game_id is not None:
        rows = rows.filter(game_id=game_id)
    counts = {game: int(n) for game, n in rows.values_list("game_id").annotate(Sum("accounts")) if n}
    overall = counts.pop(None, 0) if game_id is None else counts.get(game_id, 0)
    return counts, overall


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def days_between(start: date, end: date) -> list:
    return [start + timedelta(days=n) for n in range((end - start).days + 1)]


def currencies(*, using: str = DEFAULT_DB_ALIAS) -> list:
    return sorted(set(GameInstance.objects.using(using).values_list("currency", flat=True)))


def dashboard(*, start: date, end: date, currency: str, game: GameInstance | None = None,
              using: str = DEFAULT_DB_ALIAS) -> Dashboard:
    games = list(GameInstance.objects.using(using).filter(currency=currency).order_by("slug"))
    selected = [game] if game is not None else games
    game_ids = [g.pk for g in selected]
    in_period = {"day__gte": start, "day__lte": end, "game_id__in": game_ids}

    bet_rows = list(DailyBetTotals.objects.using(using).filter(**in_period).values("game_id", "bet_type")
                    .annotate(**_BET_SUMS))
    round_rows = list(DailyRoundTotals.objects.using(using).filter(**in_period).values("game_id", "decks")
                      .annotate(**_ROUND_SUMS, lag_max=Max("lag_ms_max")))
    accounts_per_game, accounts_overall = active_accounts(currency, start, end, using=using,
                                                          game_id=game.pk if game is not None else None)

    per_unit = minor_units_per_unit(currency)
    per_game = {g.pk: Totals(label=g.name, slug=g.slug, per_unit=per_unit) for g in selected}
    for row in bet_rows:
        totals = per_game[row["game_id"]]
        totals.bets += _int(row["bets"])
        totals.handle_cents += _int(row["handle_cents"])
        totals.paid_out_cents += _int(row["paid_out_cents"])
        totals.expected_return_ucents += _int(row["expected_return_ucents"])
    for row in round_rows:
        per_game[row["game_id"]].rounds += _int(row["rounds"])
    for game_id, count in accounts_per_game.items():
        if game_id in per_game:  # not a game that played in this currency once and plays in another now
            per_game[game_id].active_accounts = count
    overall = Totals(label=f"All games ({currency})" if game is None else game.name, per_unit=per_unit)
    for totals in per_game.values():
        overall.rounds += totals.rounds
        overall.bets += totals.bets
        overall.handle_cents += totals.handle_cents
        overall.paid_out_cents += totals.paid_out_cents
        overall.expected_return_ucents += totals.expected_return_ucents
    overall.active_accounts = accounts_overall

    bet_types = []
    for bet_type in bet_types_shown(row["bet_type"] for row in bet_rows):
        rows = [row for row in bet_rows if row["bet_type"] == bet_type]
        bet_types.append(BetTypeReturn(bet_type, *(sum(_int(row[name]) for row in rows) for name in _BET_SUMS),
                                       per_unit=per_unit))

    # Outcomes against the exact odds of the shoe each round was dealt from.
    rounds_by_decks = {}
    observed = {"PLAYER": 0, "BANKER": 0, "TIE": 0, "natural": 0}
    lag_sum = lag_max = 0
    for row in round_rows:
        rounds_by_decks[row["decks"]] = rounds_by_decks.get(row["decks"], 0) + _int(row["rounds"])
        observed["PLAYER"] += _int(row["player_wins"])
        observed["BANKER"] += _int(row["banker_wins"])
        observed["TIE"] += _int(row["ties"])
        observed["natural"] += _int(row["naturals"])
        lag_sum += _int(row["lag_ms_sum"])
        lag_max = max(lag_max, _int(row["lag_max"]))
    rounds = sum(rounds_by_decks.values())
    expected = {outcome: sum(float(n * exact_odds(d).of(outcome)) for d, n in rounds_by_decks.items())
                for outcome in Outcome.ALL}
    expected["natural"] = sum(float(n * natural_probability(d)) for d, n in rounds_by_decks.items())
    outcomes = [OutcomeRow(name, observed[name], expected[name], rounds) for name in (*Outcome.ALL, "natural")]
    outcome_test = chi_square_test_expected([observed[o] for o in Outcome.ALL], [expected[o] for o in Outcome.ALL])
    natural_test = chi_square_test_expected([observed["natural"], rounds - observed["natural"]],
                                            [expected["natural"], rounds - expected["natural"]])

    changes = list(
        AuditEvent.objects.using(using).filter(action=AuditAction.GAME_CONFIGURED, object_type="gameinstance",
                                  object_id__in=[str(g) for g in game_ids],
                                  created_at__gte=_midnight(start), created_at__lt=_midnight(end + timedelta(days=1)))
        .order_by("created_at", "id")[:CHANGES_SHOWN]
    )
    slugs = {str(g.pk): g.slug for g in selected}
    for change in changes:
        change.game_slug = slugs.get(change.object_id, change.object_id)
        change.summary = ", ".join(
            f"{name.replace('_', ' ')} {(change.before or {}).get(name)} → {value}"
            for name, value in sorted((change.after or {}).items())
        )

    return Dashboard(
        start=start, end=end, currency=currency, game=game, games=games,
        per_game=list(per_game.values()), overall=overall, bet_types=bet_types, outcomes=outcomes,
        outcome_test=outcome_test, natural_test=natural_test, decks=sorted(rounds_by_decks),
        lag_avg_ms=lag_sum / rounds if rounds else None, lag_max_ms=lag_max,
        queue=settlement_queue(count_held=False, using=using),
        changes=changes, series=_series(start, end, in_period, changes, expected, observed, rounds, per_unit,
                                        using=using),
    )


def _series(start, end, in_period, changes, expected, observed, rounds, per_unit: int, *, using: str) -> dict:
    """Daily series for the charts, every day of the period (zeros where nothing was settled)."""
    days = days_between(start, end)
    index = {day: n for n, day in enumerate(days)}
    handle = [0] * len(days)
    paid = [0] * len(days)
    expected_return = [0] * len(days)
    rows = list(DailyBetTotals.objects.using(using).filter(**in_period).values("day", "bet_type")
                .annotate(handle=Sum("handle_cents"), paid=Sum("paid_out_cents"),
                          expected=Sum("expected_return_ucents")))
    by_type = {t: {"handle": [0] * len(days), "paid": [0] * len(days), "expected": [0] * len(days)}
               for t in bet_types_shown(row["bet_type"] for row in rows)}
    for row in rows:
        n = index[row["day"]]
        handle[n] += _int(row["handle"])
        paid[n] += _int(row["paid"])
        expected_return[n] += _int(row["expected"])
        series = by_type[row["bet_type"]]
        series["handle"][n] += _int(row["handle"])
        series["paid"][n] += _int(row["paid"])
        series["expected"][n] += _int(row["expected"])
    rounds_per_day = [0] * len(days)
    lag_sum = [0] * len(days)
    for row in (DailyRoundTotals.objects.using(using).filter(**in_period).values("day")
                .annotate(rounds=Sum("rounds"), lag=Sum("lag_ms_sum"))):
        n = index[row["day"]]
        rounds_per_day[n] = _int(row["rounds"])
        lag_sum[n] = _int(row["lag"])

    scale = UCENTS_PER_UNIT // per_unit

    def series_percent(numerator, denominator, factor=1):
        return [round(100 * a / (b * factor), 4) if b else None for a, b in zip(numerator, denominator, strict=True)]

    return {
        "days": [day.isoformat() for day in days],
        "handle": [c / per_unit for c in handle],
        "ggr": [(h - p) / per_unit for h, p in zip(handle, paid, strict=True)],
        "rtp": series_percent(paid, handle),
        "theoretical_rtp": series_percent(expected_return, handle, scale),
        "rtp_by_type": {t: {"label": bet_type_label(t), "actual": series_percent(s["paid"], s["handle"]),
                            "theoretical": series_percent(s["expected"], s["handle"], scale)}
                        for t, s in by_type.items()},
        "rounds": rounds_per_day,
        # In seconds, as the table beside the chart writes the lag (duration_text).
        "lag_avg_s": [round(s / r / 1000, 3) if r else None for s, r in zip(lag_sum, rounds_per_day, strict=True)],
        "outcomes": {
            "labels": ["Player", "Banker", "Tie", "Natural"],
            "observed": [round(100 * observed[k] / rounds, 4) if rounds else None
                         for k in ("PLAYER", "BANKER", "TIE", "natural")],
            "expected": [round(100 * expected[k] / rounds, 4) if rounds else None
                         for k in ("PLAYER", "BANKER", "TIE", "natural")],
        },
        "changes": [{"day": change.created_at.date().isoformat(), "game": change.game_slug,
                     "summary": change.summary, "reason": change.reason} for change in changes],
    }
