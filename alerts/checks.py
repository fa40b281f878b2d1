"""The periodic checks: each reads the state of things and returns what it finds (nothing when all is well).

A finding names its episode by ``kind`` and ``key``. A condition that can come back after it was
resolved (settlement lag, rounds left for operators, a broken audit chain) is ``recurring``: it opens
a new alert then. A finding about a fixed past fact (a day's outcomes, a day's RTP, one payout) is
raised once for its key, ever.
"""

import math
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction

from django.conf import settings
from django.db.models import Count, F, Min, Sum
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from alerts import readiness as readiness_probes
from alerts import schedules
from alerts.choices import AlertKind, AlertSeverity
from audit.partitioning import PARTITIONED_TABLES, months_ahead
from audit.selectors import audit_chain_check, audit_pending_summary, audit_unverified_heads
from audit.verification import check_log
from core.currencies import amount_text
from dbutils import replicas as db_replicas
from games.choices import BetStatus, RoundStatus
from games.engine import bet_odds, bet_paytable, exact_odds, settlement_of
from games.engine.stats import chi_square_test_expected
from games.models import Bet, Round
from settlement.models import DailyRoundTotals

SETTLED = (BetStatus.WON, BetStatus.LOST, BetStatus.PUSH)


@dataclass(frozen=True)
class Finding:
    kind: str
    key: str
    severity: str
    message: str
    details: dict = field(default_factory=dict)
    recurring: bool = False


def settlement_lag() -> list:
    waiting = Round.objects.filter(status=RoundStatus.DEALT,
                                   settlement_failures__lt=settings.MAX_SETTLEMENT_FAILURES)
    oldest = waiting.aggregate(oldest=Min("dealt_at"), count=Count("id"))
    if oldest["oldest"] is None:
        return []
    lag = (timezone.now() - oldest["oldest"]).total_seconds()
    if lag <= settings.ALERT_SETTLEMENT_LAG_SECONDS:
        return []
    return [Finding(AlertKind.SETTLEMENT_LAG, "settlement", AlertSeverity.CRITICAL,
                    f"{oldest['count']} dealt round(s) wait for settlement; the oldest for {lag:.0f} s "
                    f"(threshold {settings.ALERT_SETTLEMENT_LAG_SECONDS} s).",
                    {"waiting_rounds": oldest["count"], "oldest_lag_seconds": round(lag)}, recurring=True)]


def rounds_for_operators() -> list:
    stuck = list(Round.objects.filter(status=RoundStatus.DEALT,
                                      settlement_failures__gte=settings.MAX_SETTLEMENT_FAILURES)
                 .order_by("pk").values_list("pk", flat=True)[:100])
    if not stuck:
        return []
    return [Finding(AlertKind.ROUNDS_FOR_OPERATORS, "settlement", AlertSeverity.CRITICAL,
                    f"{len(stuck)} round(s) failed settlement {settings.MAX_SETTLEMENT_FAILURES} times and are left "
                    f"for operators: {', '.join(map(str, stuck[:10]))}{'…' if len(stuck) > 10 else ''}.",
                    {"round_ids": stuck}, recurring=True)]


def held_bets() -> list:
    """Bets whose settlement failed while their round settled: unpaid until an operator settles them."""
    held = list(Bet.objects.filter(status=BetStatus.HELD).order_by("pk").values_list("pk", flat=True)[:101])
    if not held:
        return []
    count = Bet.objects.filter(status=BetStatus.HELD).count() if len(held) > 100 else len(held)
    shown = held[:10]
    return [Finding(AlertKind.HELD_BETS, "settlement", AlertSeverity.CRITICAL,
                    f"{count} bet(s) held: their settlement failed and they wait for an operator (bets "
                    f"{', '.join(map(str, shown))}{'…' if count > len(shown) else ''}; see each bet's reason).",
                    {"held_bets": count, "bet_ids": held[:100]}, recurring=True)]


def audit_chain() -> list:
    """The whole audit log verifies: every leaf, the root, each stored head's signature, and the hash
    chain of the events written before the Merkle log."""
    log = check_log()
    checked, _head, chain_problem = audit_chain_check()
    problem = log.problem or chain_problem
    if problem is None:
        return []
    return [Finding(AlertKind.AUDIT_CHAIN, "chain", AlertSeverity.CRITICAL,
                    f"The audit log does not verify: {problem}.",
                    {"tree_size": log.tree_size, "chained_events_checked": checked}, recurring=True)]


def audit_pending() -> list:
    """Events the sequencer has not placed in the log for too long (a stalled sequencer, or the
    transaction that wrote them left open: only its own events wait for it)."""
    waiting = audit_pending_summary()
    if waiting["oldest_created_at"] is None:
        return []
    age = (timezone.now() - waiting["oldest_created_at"]).total_seconds()
    if age <= settings.ALERT_AUDIT_PENDING_SECONDS:
        return []
    return [Finding(AlertKind.AUDIT_PENDING, "sequencer", AlertSeverity.CRITICAL,
                    f"{waiting['count']} audit event(s) wait for the sequencer; the oldest for {age:.0f} s "
                    f"(threshold {settings.ALERT_AUDIT_PENDING_SECONDS} s).",
                    {"pending_events": waiting["count"], "oldest_wait_seconds": round(age)}, recurring=True)]


def audit_heads() -> list:
    """Stored tree heads whose signature does not hold under the public key (a row written by
    someone without the signing key): never shown or used, and named here."""
    forged = audit_unverified_heads()
    if not forged:
        return []
    sizes = [head.tree_size for head in forged]
    return [Finding(AlertKind.AUDIT_HEADS, "heads", AlertSeverity.CRITICAL,
                    f"{len(forged)} stored audit head(s) do not verify with the public key (tree sizes "
                    f"{', '.join(map(str, sizes[:10]))}{'…' if len(sizes) > 10 else ''}): they are ignored; "
                    "someone wrote them without the signing key.",
                    {"head_ids": [head.pk for head in forged], "tree_sizes": sizes}, recurring=True)]


def periodic_tasks() -> list:
    """The periodic tasks the audit log and the alerts depend on (alerts.schedules) are there,
    enabled, and ran within their interval plus ALERT_PERIODIC_TASK_GRACE_SECONDS (beat records each
    run in the task's last_run_at every few minutes). Only where beat runs them: with a broker."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return []
    now, problems = timezone.now(), []
    tasks = {task.name: task for task in
             PeriodicTask.objects.filter(name__in=schedules.DEPENDED_ON).select_related("interval")}
    for name, celery_task in schedules.DEPENDED_ON.items():
        task = tasks.get(name)
        if task is None or task.task != celery_task:
            problems.append(f"“{name}” ({celery_task}) is missing")
            continue
        if not task.enabled:
            problems.append(f"“{name}” is disabled")
            continue
        every = schedules.interval_seconds(task) or 86400
        if every > schedules.MAX_INTERVAL_SECONDS:
            problems.append(f"“{name}” runs only every {every:.0f} s")
            continue
        last = task.last_run_at or task.date_changed
        if last is not None and (now - last).total_seconds() > every + settings.ALERT_PERIODIC_TASK_GRACE_SECONDS:
            problems.append(f"“{name}” last ran {(now - last).total_seconds():.0f} s ago (every {every:.0f} s)")
    if not problems:
        return []
    return [Finding(AlertKind.PERIODIC_TASKS, "beat", AlertSeverity.CRITICAL,
                    f"Periodic tasks the audit log or the alerts depend on are not running: {'; '.join(problems)}.",
                    {"problems": problems}, recurring=True)]


def readiness() -> list:
    """What a worker needs to serve (alerts.readiness: the broker, the cache, the migrations)."""
    problems = readiness_probes.problems()
    if not problems:
        return []
    return [Finding(AlertKind.READINESS, "workers", AlertSeverity.CRITICAL,
                    f"Not ready: {'; '.join(problems)}.", {"problems": problems}, recurring=True)]


def _recent_days():
    today = timezone.now().date()
    return today - timedelta(days=settings.ALERT_LOOKBACK_DAYS), today


def outcome_tests() -> list:
    """Per game and day: Player/Banker/Tie counts against the exact odds of the shoes played."""
    start, end = _recent_days()
    rows = DailyRoundTotals.objects.filter(day__range=(start, end)).select_related("game")
    groups = {}
    for row in rows:
        odds = exact_odds(row.decks)
        group = groups.setdefault((row.game.slug, row.day), {"observed": [0, 0, 0], "expected": [0.0, 0.0, 0.0]})
        for index, (count, probability) in enumerate(((row.player_wins, odds.player),
                                                      (row.banker_wins, odds.banker), (row.ties, odds.tie))):
            group["observed"][index] += count
            group["expected"][index] += row.rounds * float(probability)
    found = []
    for (slug, day), group in sorted(groups.items()):
        test = chi_square_test_expected(group["observed"], group["expected"])
        if test is None or test.p_value >= settings.ALERT_OUTCOME_P_VALUE:
            continue
        found.append(Finding(
            AlertKind.OUTCOME_TEST, f"{slug}:{day}", AlertSeverity.CRITICAL,
            f"{slug} on {day}: Player/Banker/Tie {group['observed']} against expected "
            f"{[round(e, 1) for e in group['expected']]}; chi-square {test.statistic:.2f}, p-value "
            f"{test.p_value:.2e} (below {settings.ALERT_OUTCOME_P_VALUE}).",
            {"observed": group["observed"], "expected": group["expected"], "p_value": test.p_value}))
    return found


# Cochran's rule for the mean of a skewed variable to be near normal: more than 25 × skewness²
# samples (Sugden, Smith & Jones, JASA 2000). A Dragon Bonus (31 to 1 at 0.3 %) needs about 1,500.
NORMAL_ENOUGH_PER_SKEWNESS_SQUARED = 25


def _return_moments(decks: int, bet_type: str, multiplier: Decimal, paytable=None) -> tuple:
    """(mean, variance, skewness) of what one unit staked returns, for any bet type: its event's
    multiplier in the paytable it settles on (``bet_paytable``: a side bet's own, a main bet's from
    its multiplier), weighed by the exact probabilities of its events on the shoe."""
    table = bet_paytable(bet_type, multiplier, paytable)
    returns = [(probability, Fraction(settlement_of(bet_type, table, event)[1]))
               for event, probability in bet_odds(decks)[bet_type].probabilities().items()]
    mean = sum(probability * returned for probability, returned in returns)
    variance = sum(probability * (returned - mean) ** 2 for probability, returned in returns)
    third = sum(probability * (returned - mean) ** 3 for probability, returned in returns)
    return mean, variance, float(third) / float(variance) ** 1.5 if variance else 0.0


def rtp_bands() -> list:
    """Per game, bet type and day: the amount paid out against the theoretical return of the same bets.

    The paid-out total is a sum of independent bets, each returning stake × its event's multiplier
    (1 on a push, 0 on a loss); by the central limit theorem it is close to normal with mean
    Σ stake·RTP and variance Σ stake²·σ², σ² the variance of one unit's return on the bet's own terms
    (a main bet's multiplier, a side bet's paytable) and shoe (exact). The band is
    ALERT_RTP_BAND_SIGMAS standard deviations either side (4: a false alarm once in ~16,000
    game-bet-type-days), and only from enough bets for the normal law to hold: ALERT_RTP_MIN_BETS,
    or more for a skewed return (Cochran's rule: a tie needs about 190, a Dragon Bonus about 1,500),
    lest a few long shots raise false alarms.
    """
    start, end = _recent_days()
    rows = (Bet.objects.filter(status__in=SETTLED, settled_at__date__range=(start, end))
            .values("round__game__slug", "bet_type", "round__decks", "multiplier", "paytable", "settled_at__date")
            .annotate(bets=Count("id"), handle=Sum("stake"), paid=Sum("payout"), squares=Sum(F("stake") * F("stake"))))
    groups = {}
    for row in rows:
        key = (row["round__game__slug"], str(row["settled_at__date"]), row["bet_type"])
        mean, variance, skewness = _return_moments(row["round__decks"], row["bet_type"], row["multiplier"],
                                                   row["paytable"])
        group = groups.setdefault(key, {"bets": 0, "handle": Fraction(0), "paid": Fraction(0), "expected": Fraction(0),
                                        "variance": Fraction(0), "needed": settings.ALERT_RTP_MIN_BETS})
        group["needed"] = max(group["needed"], math.ceil(NORMAL_ENOUGH_PER_SKEWNESS_SQUARED * skewness ** 2))
        group["bets"] += row["bets"]
        group["handle"] += Fraction(row["handle"])
        group["paid"] += Fraction(row["paid"])
        group["expected"] += Fraction(row["handle"]) * mean
        group["variance"] += Fraction(row["squares"]) * variance
    found = []
    for (slug, day, bet_type), group in sorted(groups.items()):
        if group["bets"] < group["needed"] or group["variance"] == 0:
            continue
        sigma = math.sqrt(group["variance"])
        deviation = float(group["paid"] - group["expected"]) / sigma
        if abs(deviation) <= settings.ALERT_RTP_BAND_SIGMAS:
            continue
        actual, expected = group["paid"] / group["handle"], group["expected"] / group["handle"]
        half_band = settings.ALERT_RTP_BAND_SIGMAS * sigma / float(group["handle"])
        found.append(Finding(
            AlertKind.RTP_BAND, f"{slug}:{day}:{bet_type}", AlertSeverity.WARNING,
            f"{slug} {bet_type} on {day}: actual RTP {float(actual):.2%} over {group['bets']} bets "
            f"(handle {float(group['handle']):.2f}) against {float(expected):.2%} ± {half_band:.2%} "
            f"({deviation:+.1f} standard deviations).",
            {"bets": group["bets"], "actual_rtp": float(actual), "expected_rtp": float(expected),
             "band": half_band, "deviation_sigmas": deviation}))
    return found


def large_payouts() -> list:
    start, _end = _recent_days()
    bets = (Bet.objects.filter(status=BetStatus.WON, payout__gte=settings.ALERT_PAYOUT_THRESHOLD,
                               settled_at__date__gte=start)
            .select_related("account", "round__game").order_by("pk")[:100])
    return [Finding(AlertKind.LARGE_PAYOUT, f"bet:{bet.pk}", AlertSeverity.WARNING,
                    f"Bet {bet.pk} of {bet.account.external_id} on {bet.round.game.slug} paid "
                    f"{amount_text(bet.payout, bet.account.currency)} "
                    f"{bet.account.currency} (threshold {settings.ALERT_PAYOUT_THRESHOLD}).",
                    {"bet": bet.pk, "round": bet.round_id, "account": bet.account.external_id,
                     "payout": amount_text(bet.payout, bet.account.currency)})
            for bet in bets]


def replicas() -> list:
    """Each read replica (REPLICA_DATABASE_URL) that does not answer, is no standby, or is more than
    REPLICA_MAX_LAG_SECONDS behind: its reads go to the primary meanwhile (dbutils.replicas)."""
    findings = []
    for alias in db_replicas.aliases():
        health = db_replicas.measure(alias)
        if health.usable:
            continue
        if health.lag is None:
            message = f"Read replica {alias} does not answer; its reads go to the primary: {health.error}"
        else:
            behind = f"{health.lag:.0f} s" if math.isfinite(health.lag) else "an unknown time"
            message = (f"Read replica {alias} is {behind} behind the primary (allowed "
                       f"{settings.REPLICA_MAX_LAG_SECONDS:g} s); its reads go to the primary.")
        lag = round(health.lag, 1) if health.lag is not None and math.isfinite(health.lag) else None
        findings.append(Finding(AlertKind.REPLICA, alias, AlertSeverity.WARNING, message,
                                {"alias": alias, "lag_seconds": lag, "error": health.error}, recurring=True))
    return findings


def partitions(today=None) -> list:
    """A partitioned table (audit.partitioning) with no partition for next month: there is no default
    partition, so its rows are refused once next month begins. The daily task keeps two months ahead;
    this finds it stopped for a month, with a month still left to mend it (``partitions ensure``)."""
    today = today or timezone.localdate()
    findings = []
    for table in PARTITIONED_TABLES:
        if months_ahead(table, today=today) < 1:
            findings.append(Finding(
                AlertKind.PARTITIONS, table, AlertSeverity.CRITICAL,
                f"{table} has no partition for next month: its rows will be refused then. Run "
                "`python manage.py partitions ensure` as the tables' owner and look at why the daily task did not.",
                {"table": table}, recurring=True))
    return findings


# Run every minute by beat, except the audit chain: a full walk, run hourly (see the migrations).
CHECKS = {
    "settlement_lag": settlement_lag,
    "rounds_for_operators": rounds_for_operators,
    "held_bets": held_bets,
    "outcome_tests": outcome_tests,
    "rtp_bands": rtp_bands,
    "large_payouts": large_payouts,
    "audit_pending": audit_pending,
    "audit_heads": audit_heads,
    "periodic_tasks": periodic_tasks,
    "replicas": replicas,
    "partitions": partitions,
    "readiness": readiness,
    "audit_chain": audit_chain,
}
# The kind each check of a critical condition finds: once the check runs and finds it no longer,
# the system resolves its unresolved alert (alerts.services.alerts_check).
CLEARED_BY = {
    "settlement_lag": AlertKind.SETTLEMENT_LAG, "rounds_for_operators": AlertKind.ROUNDS_FOR_OPERATORS,
    "held_bets": AlertKind.HELD_BETS, "audit_pending": AlertKind.AUDIT_PENDING, "audit_heads": AlertKind.AUDIT_HEADS,
    "periodic_tasks": AlertKind.PERIODIC_TASKS, "readiness": AlertKind.READINESS, "audit_chain": AlertKind.AUDIT_CHAIN,
    "partitions": AlertKind.PARTITIONS,
}
FREQUENT = [name for name in CHECKS if name != "audit_chain"]
# The hourly task runs these: the two alert tasks watch that the other still runs.
HOURLY = ["audit_chain", "periodic_tasks"]
