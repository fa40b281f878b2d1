"""The alert checks, once per episode, with their notifications."""

import math
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction

import pytest
from django.core import mail
from django.core.management import call_command
from django.utils import timezone

from alerts import checks, services
from alerts.models import Alert
from alerts.tasks import run_checks
from audit.models import AuditEvent
from games.engine import bet_odds, exact_odds
from settlement.models import DailyRoundTotals
from tests.alerts.conftest import LOST, WON

pytestmark = pytest.mark.django_db


def test_settlement_lag_opens_one_alert_per_episode_and_emails_once(dealt_long_ago, operator, settings,
                                                                    django_capture_on_commit_callbacks):
    settings.ALERT_EMAIL_RECIPIENTS = ["ops@casino.example"]
    dealt_long_ago(minutes=10)
    with django_capture_on_commit_callbacks(execute=True):
        assert run_checks.delay(["settlement_lag"]).get() == {"settlement_lag": [1, 1]}
        assert run_checks.delay(["settlement_lag"]).get() == {"settlement_lag": [1, 0]}  # seen again: not re-opened
    alert = Alert.objects.get()
    assert (alert.kind, alert.status, alert.times_seen) == ("settlement_lag", "open", 2)
    assert "1 dealt round(s)" in alert.message
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["ops@casino.example"]
    assert "Settlement lag" in mail.outbox[0].subject
    assert AuditEvent.objects.filter(action="alert.opened").count() == 1
    services.alert_resolve(alert_id=alert.pk, actor=operator, note="workers restarted")
    services.alerts_check(["settlement_lag"])  # still lagging: a new episode
    assert Alert.objects.filter(status="open").count() == 1 and Alert.objects.count() == 2


def test_a_fresh_dealt_round_is_no_lag(dealt_long_ago):
    dealt_long_ago(minutes=1)
    assert checks.settlement_lag() == []


def test_rounds_left_for_operators(dealt_long_ago, settings):
    stuck = dealt_long_ago(minutes=1, failures=settings.MAX_SETTLEMENT_FAILURES)
    [finding] = checks.rounds_for_operators()
    assert finding.details == {"round_ids": [stuck.pk]} and finding.severity == "critical"


def test_a_large_payout_is_raised_once_ever(settled_bets, operator, settings):
    settings.ALERT_PAYOUT_THRESHOLD = 19
    settled_bets([(WON, "19.50"), (WON, "18.00"), (LOST, "0")])
    assert services.alerts_check(["large_payouts"]) == {"large_payouts": (1, 1)}
    alert = Alert.objects.get()
    assert "paid 19.50 USD" in alert.message
    services.alert_resolve(alert_id=alert.pk, actor=operator, note="a legitimate win")
    assert services.alerts_check(["large_payouts"]) == {"large_payouts": (1, 0)}
    assert Alert.objects.count() == 1


def test_a_days_outcomes_off_the_odds(game):
    today = timezone.now().date()
    DailyRoundTotals.objects.create(day=today, game=game, decks=8, rounds=10_000, player_wins=4_460,
                                    banker_wins=4_590, ties=950)
    assert checks.outcome_tests() == []
    DailyRoundTotals.objects.create(day=today - timedelta(days=1), game=game, decks=8, rounds=10_000,
                                    player_wins=4_000, banker_wins=5_000, ties=1_000)
    [finding] = checks.outcome_tests()
    assert finding.key == f"main-table:{today - timedelta(days=1)}" and finding.details["p_value"] < 0.001


def test_actual_rtp_outside_the_band_its_handle_allows(settled_bets):
    settled_bets([(WON, "19.50")] * 100 + [(LOST, "0")] * 100)  # 97.5 % against 98.94 %: well inside
    assert checks.rtp_bands() == []
    settled_bets([(LOST, "0")] * 200, bet_type="PLAYER")  # nothing returned on 2,000.00 staked
    [finding] = checks.rtp_bands()
    assert finding.key.endswith(":PLAYER") and finding.details["deviation_sigmas"] < -4
    assert "actual RTP 0.00%" in finding.message


def test_a_main_bets_return_variance_is_its_win_push_or_loss():
    for decks in (1, 6, 8):
        odds = exact_odds(decks)
        for bet_type, win, push in (("PLAYER", odds.player, odds.tie), ("BANKER", odds.banker, odds.tie),
                                    ("TIE", odds.tie, Fraction(0))):
            for multiplier in ("1.95", "2", "8.5", "1000"):
                m = Fraction(Decimal(multiplier))
                mean = win * m + push
                assert checks._return_moments(decks, bet_type, Decimal(multiplier))[:2] == (
                    mean, win * m * m + push - mean * mean)


DRAGON = {"NATURAL_WIN": "2", "WIN_BY_9": "31", "WIN_BY_8": "11", "WIN_BY_7": "7", "WIN_BY_6": "5",
          "WIN_BY_5": "3", "WIN_BY_4": "2.5", "NATURAL_TIE": "1"}


def _moments(decks: int, bet_type: str, returned: dict) -> tuple:
    """(mean, variance) of one unit's return, each event returning ``returned`` of it (else 0)."""
    counts = bet_odds(decks)[bet_type]
    mean = sum(Fraction(n, counts.total) * returned.get(event, 0) for event, n in counts.counts.items())
    second = sum(Fraction(n, counts.total) * returned.get(event, 0) ** 2 for event, n in counts.counts.items())
    return mean, second - mean * mean


@pytest.mark.parametrize("decks", [1, 8])
def test_a_side_bets_return_variance_is_its_paytables(decks):
    # A natural tie is a push whatever the paytable says: listed or not, it returns the stake.
    returned = {event: Fraction(Decimal(value)) for event, value in DRAGON.items()}
    for paytable in (DRAGON, {k: v for k, v in DRAGON.items() if k != "NATURAL_TIE"}):
        assert checks._return_moments(decks, "DRAGON_BONUS_BANKER", Decimal("31"), paytable)[:2] == _moments(
            decks, "DRAGON_BONUS_BANKER", returned)
    assert checks._return_moments(decks, "PERFECT_PAIR", Decimal("26"), {"ONE_PERFECT_PAIR": "26"})[:2] == _moments(
        decks, "PERFECT_PAIR", {"ONE_PERFECT_PAIR": 26})


def test_a_side_bets_band_weighs_each_bet_by_its_own_paytable(settled_bets):
    twelve, eleven = {"PAIR": "12"}, {"PAIR": "11.5"}
    settled_bets([(WON, "120.00")] * 30 + [(LOST, "0")] * 370, bet_type="PLAYER_PAIR", paytable=twelve)  # 90 %
    assert checks.rtp_bands() == []
    settled_bets([(LOST, "0")] * 600, bet_type="PLAYER_PAIR", paytable=eleven)
    [finding] = checks.rtp_bands()
    assert finding.key.endswith(":PLAYER_PAIR") and finding.details["bets"] == 1000
    (mean_12, variance_12), (mean_11, variance_11) = (_moments(8, "PLAYER_PAIR", {"PAIR": Fraction(m)})
                                                      for m in ("12", "23/2"))
    expected = (4000 * mean_12 + 6000 * mean_11) / 10000
    sigma = math.sqrt(400 * 100 * variance_12 + 600 * 100 * variance_11)
    assert finding.details["expected_rtp"] == pytest.approx(float(expected), rel=1e-12)
    assert finding.details["deviation_sigmas"] == pytest.approx((3600 - float(expected) * 10000) / sigma, rel=1e-9)
    assert finding.details["deviation_sigmas"] < -4


def test_a_returns_skewness_is_its_third_moment_over_the_variances():
    # The tie at 9 to 1: a win returns 9, a loss 0, so the skewness is a Bernoulli's, (1 - 2p) / sqrt(p q).
    p = float(exact_odds(8).tie)
    assert checks._return_moments(8, "TIE", Decimal("9"))[2] == pytest.approx((1 - 2 * p) / math.sqrt(p * (1 - p)))
    assert abs(checks._return_moments(8, "BANKER", Decimal("1.95"))[2]) < 0.1  # even money: nearly symmetric


def test_a_skewed_side_bet_needs_more_bets_for_a_band(settled_bets, settings):
    """Cochran's rule: a Dragon Bonus's 31 to 1 needs about 1,500 bets a day before its total is
    near normal; on fewer, a few long shots would pass for four standard deviations."""
    settings.ALERT_RTP_MIN_BETS = 100
    skewness = checks._return_moments(8, "DRAGON_BONUS_BANKER", Decimal("31"), DRAGON)[2]
    needed = math.ceil(checks.NORMAL_ENOUGH_PER_SKEWNESS_SQUARED * skewness ** 2)
    assert 1_000 < needed <= 1_600
    settled_bets([(WON, "310.00")] * 70 + [(LOST, "0")] * 930, bet_type="DRAGON_BONUS_BANKER", paytable=DRAGON)
    assert checks.rtp_bands() == []  # far past four standard deviations by the normal law, on 1,000 bets
    settled_bets([(LOST, "0")] * 600, bet_type="DRAGON_BONUS_BANKER", paytable=DRAGON)
    [finding] = checks.rtp_bands()
    assert finding.details["bets"] == 1_600 and finding.details["deviation_sigmas"] > 4


def test_too_few_bets_make_no_band(settled_bets):
    settled_bets([(LOST, "0")] * 20)
    assert checks.rtp_bands() == []


def test_a_broken_audit_chain(monkeypatch):
    assert checks.audit_chain() == []
    monkeypatch.setattr(checks, "audit_chain_check", lambda: (7, "x", "event 8: its content does not match"))
    [finding] = checks.audit_chain()
    assert finding.kind == "audit_chain" and finding.recurring


def test_a_merkle_log_that_does_not_verify(monkeypatch):
    from audit.verification import LogCheck

    monkeypatch.setattr(checks, "check_log", lambda: LogCheck(tree_size=3, problem="leaf 2 altered"))
    [finding] = checks.audit_chain()
    assert finding.kind == "audit_chain" and "leaf 2 altered" in finding.message


def test_events_waiting_for_the_sequencer(operator, settings):
    from audit.services import audit_record

    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    audit_record(actor=operator, action="game.created", object_type="gameinstance", object_id="1")
    assert checks.audit_pending() == []  # just written: within the threshold
    settings.ALERT_AUDIT_PENDING_SECONDS = -1  # any wait at all is now too long
    [finding] = checks.audit_pending()
    assert finding.kind == "audit_pending" and finding.details["pending_events"] >= 1


def test_the_command_runs_the_checks(dealt_long_ago, capsys):
    dealt_long_ago(minutes=10)
    call_command("check_alerts", "settlement_lag")
    assert "settlement_lag: 1 finding(s), 1 alert(s) opened" in capsys.readouterr().out


def test_the_beat_schedules_exist():
    from django_celery_beat.models import PeriodicTask

    assert set(PeriodicTask.objects.filter(task="alerts.check").values_list("name", flat=True)) == {
        "Alert checks", "Alert check: audit chain"}


@pytest.mark.owner  # making a partition is the tables' owner's
def test_a_table_without_next_months_partition_opens_a_critical_alert_cleared_once_ensured():
    import json
    from datetime import date

    from django_celery_beat.models import PeriodicTask

    from audit.partitioning import PARTITIONED_TABLES, partitions_ensure

    assert "partitions" in json.loads(PeriodicTask.objects.get(name="Alert checks").kwargs)["names"]
    assert checks.partitions() == []  # the migrations made this month and two ahead
    today = timezone.localdate()
    three_months_on = date(today.year + (today.month + 2) // 12, (today.month + 2) % 12 + 1, 1)
    findings = checks.partitions(today=three_months_on)
    assert {(f.kind, f.severity, f.key) for f in findings} == {
        ("partitions", "critical", table) for table in PARTITIONED_TABLES}
    assert AuditEvent._meta.db_table in PARTITIONED_TABLES
    partitions_ensure(today=three_months_on)
    assert checks.partitions(today=three_months_on) == []
