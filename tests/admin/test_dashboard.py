"""The operations dashboard: who may see it, what it shows (from the aggregates only), and the lists
that never count a whole table."""

import json
import random
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit.models import AuditEvent
from backoffice.admin.filters import IndexedValuesFieldListFilter, distinct_values_by_index
from backoffice.admin.paginator import CAP, CappedCountPaginator
from games import services as game_services
from games.models import Bet
from settlement.models import DailyBetTotals
from tests.admin.conftest import client_for
from tests.aggregates_helpers import clock, play_random, settle  # noqa: F401

pytestmark = pytest.mark.django_db

URL = "/admin/dashboard/"
CANVASES = ("chart-handle-ggr", "chart-rtp", "chart-outcomes", "chart-lag")
SECTIONS = ("dashboard", "dashboard-filters", "dashboard-summary", "dashboard-rtp", "dashboard-outcomes",
            "dashboard-settlement", "dashboard-changes", "dashboard-data")


@pytest.fixture
def world(game, operator, integration, funded_account, clock, settle):  # noqa: F811
    second = game_services.game_create(actor=operator, slug="single-deck", name="Single deck", decks=1,
                                       min_bet="1.00", max_bet="100.00", tie_multiplier="10.5")
    accounts = [funded_account(f"player-{n}", "5000.00") for n in range(4)]
    play_random(random.Random(11), games=[game, second], accounts=accounts, integration=integration,
                operator=operator, clock=clock, settle=settle, days=3, rounds_per_day=10)
    return {"games": [game, second], "period": {"start": "2026-03-01", "end": "2026-03-05"}}


def test_the_url_is_the_admin_sites():
    assert reverse("admin:dashboard") == URL


@pytest.mark.parametrize("role", ["operator", "support", "administrator"])
def test_operators_support_and_admins_see_it(request, role, world):
    response = client_for(request.getfixturevalue(role)).get(URL, world["period"])
    assert response.status_code == 200
    content = response.content.decode()
    for element in SECTIONS + CANVASES:
        assert f'id="{element}"' in content, element
    assert "vendor/chartjs/chart.umd.js" in content and "settlement/dashboard.js" in content
    # Every script and style sheet is served by us: none is loaded from another host.
    assert not re.search(r'<(?:script|link)[^>]+(?:src|href)="(?:https?:)?//', content), "external asset"


@pytest.mark.parametrize("role", ["integration", "nobody"])
def test_users_who_are_not_staff_are_sent_to_the_log_in(request, role):
    # As everywhere in the admin: only staff get in; the dashboard then checks its permission.
    response = client_for(request.getfixturevalue(role)).get(URL)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_staff_without_the_permission_is_refused(db):
    user = User.objects.create_user("staff-only", password="x", is_staff=True)
    assert client_for(user).get(URL).status_code == 403


def test_anonymous_goes_to_the_log_in(client):
    response = client.get(URL)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_linked_from_the_index_for_those_who_may_see_it(as_operator, as_support, db):
    for client in (as_operator, as_support):
        assert URL in client.get(reverse("admin:index")).content.decode()
    user = User.objects.create_user("staff-only", password="x", is_staff=True)
    assert URL not in client_for(user).get(reverse("admin:index")).content.decode()


def test_figures_match_the_aggregates_and_the_raw_bets(as_operator, world):
    response = as_operator.get(URL, world["period"])
    board = response.context["board"]
    settled = Bet.objects.filter(status__in=["WON", "LOST", "PUSH"])
    handle = sum(bet.stake for bet in settled)
    paid = sum(bet.payout for bet in settled)
    assert board.overall.bets == settled.count() > 0
    assert board.overall.handle == handle
    assert board.overall.paid_out == paid
    assert board.overall.ggr == handle - paid
    assert board.overall.active_accounts == settled.values("account").distinct().count()
    assert sum(row.bets for row in board.bet_types) == board.overall.bets
    assert sum(row.observed for row in board.outcomes[:3]) == board.overall.rounds
    assert board.outcome_test.df == 2 and 0 <= board.outcome_test.p_value <= 1
    content = response.content.decode()
    assert f"{board.overall.handle:,.2f}" in content
    # Per game, and one game alone.
    assert {row.slug for row in board.per_game} == {"main-table", "single-deck"}
    alone = as_operator.get(URL, {**world["period"], "game": "single-deck"}).context["board"]
    assert alone.overall.bets == settled.filter(round__game__slug="single-deck").count()


def test_chart_data_and_configuration_markers(as_operator, world):
    response = as_operator.get(URL, world["period"])
    content = response.content.decode()
    start = content.index('<script id="dashboard-data" type="application/json">') + len(
        '<script id="dashboard-data" type="application/json">')
    data = json.loads(content[start:content.index("</script>", start)])
    assert data["days"][0] == "2026-03-01" and len(data["days"]) == 5
    for key in ("handle", "ggr", "rtp", "theoretical_rtp", "lag_avg_s"):
        assert len(data[key]) == 5
    assert set(data["rtp_by_type"]) == {"PLAYER", "BANKER", "TIE"}
    assert data["outcomes"]["labels"] == ["Player", "Banker", "Tie", "Natural"]
    # play_random changes main-table's multipliers on day 2: a marker on that day.
    configured = AuditEvent.objects.get(action="game.configured", object_id=str(world["games"][0].pk))
    assert {"day": configured.created_at.date().isoformat(), "game": "main-table"}.items() <= data["changes"][0].items()
    assert "tie multiplier 9.0000 → 8.5000" in data["changes"][0]["summary"]
    assert "promotion" in content


def test_theoretical_rtp_follows_the_configuration_in_force(as_operator, world):
    board = as_operator.get(URL, {**world["period"], "game": "main-table"}).context["board"]
    tie = next(row for row in board.bet_types if row.bet_type == "TIE")
    rows = DailyBetTotals.objects.filter(game=world["games"][0], bet_type="TIE")
    expected = sum(row.expected_return_ucents for row in rows) / (sum(row.handle_cents for row in rows) * 10**6)
    assert tie.theoretical_rtp == pytest.approx(expected)
    # Bets at a tie multiplier of 9 (RTP 85.6 %) and of 8.5 (80.9 %): the blend is in between.
    assert 0.809 < tie.theoretical_rtp < 0.857


def test_reads_only_aggregates_never_the_bets(as_operator, world):
    with CaptureQueriesContext(connection) as queries:
        assert as_operator.get(URL, world["period"]).status_code == 200
    tables = " ".join(query["sql"] for query in queries.captured_queries)
    assert "games_bet" not in tables
    assert "settlement_dailybettotals" in tables


def test_empty_period_and_bad_input(as_operator, world):
    empty = as_operator.get(URL, {"start": "2020-01-01", "end": "2020-01-31"})
    assert empty.status_code == 200
    board = empty.context["board"]
    assert board.overall.bets == 0 and board.outcome_test is None and board.overall.hold is None
    assert "No settled rounds in the period" in empty.content.decode()
    for params in ({"start": "2026-03-05", "end": "2026-03-01"}, {"start": "nonsense"},
                   {"start": "2000-01-01", "end": "2026-01-01"}, {"game": "no-such-game"}):
        response = as_operator.get(URL, params)
        assert response.status_code == 200 and response.context["board"] is None
        assert "errornote" in response.content.decode()


def test_default_period_is_the_last_30_days(as_operator, db):
    response = as_operator.get(URL)
    board = response.context["board"]
    assert (board.end - board.start) == timedelta(days=29)


class TestCappedCountPaginator:
    def test_small_lists_count_exactly(self, as_operator, world):
        response = as_operator.get(reverse("admin:games_bet_changelist"))
        assert response.status_code == 200
        cl = response.context["cl"]
        assert isinstance(cl.paginator, CappedCountPaginator)
        assert cl.result_count == Bet.objects.count() and cl.paginator.count_note == ""
        assert cl.full_result_count is None

    def test_large_lists_stop_counting(self, world, monkeypatch):
        monkeypatch.setattr(CappedCountPaginator, "cap", 5)
        paginator = CappedCountPaginator(Bet.objects.order_by("-id"), 2)
        assert paginator.count in (5, Bet.objects.count())  # 5 "or more", or the planner's estimate
        assert paginator.count_note.startswith(("more than", "about"))
        filtered = CappedCountPaginator(Bet.objects.filter(stake__gte=Decimal("0.01")).order_by("-id"), 2)
        assert filtered.count == 5 and filtered.count_note == "more than 5"
        assert len(filtered.page(3).object_list) == 1
        assert CAP == 10_000


def test_audit_filters_list_every_value(as_admin, world):
    response = as_admin.get(reverse("admin:audit_auditevent_changelist"))
    specs = {spec.title: spec for spec in response.context["cl"].filter_specs}
    action = next(spec for spec in specs.values() if getattr(spec, "lookup_kwarg", "") == "action")
    assert isinstance(action, IndexedValuesFieldListFilter)
    expected = sorted(set(AuditEvent.objects.values_list("action", flat=True)))
    assert list(action.lookup_choices) == expected
    assert distinct_values_by_index(connection, "games_auditevent", "action") == expected
    assert distinct_values_by_index(connection, "games_auditevent", "action", limit=2) == expected[:2]
