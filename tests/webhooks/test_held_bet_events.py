"""bet.settled for held bets: left out of their round's events, written when an operator settles them."""

import pytest

from games.choices import BetStatus
from games.models import Bet
from tests.settlement.faults import held_round  # noqa: F401
from webhooks.models import Event

# On PostgreSQL the fault is a trigger on the accounts table, which only the tables' owner may create.
pytestmark = [pytest.mark.django_db, pytest.mark.owner]


def test_a_held_bet_is_reported_settled_only_once_an_operator_settles_it(receiver, endpoint, operator, request):
    from settlement import services

    endpoint(["bet.settled"])
    held_round = request.getfixturevalue("held_round")  # noqa: F811 - settled after the endpoint exists
    round_ = held_round["round"]
    held = list(Bet.objects.filter(status=BetStatus.HELD).order_by("pk"))
    reported = {event.data["bet"]: event.data["status"] for event in Event.objects.filter(type="bet.settled")}
    others = Bet.objects.filter(round=round_).exclude(status=BetStatus.HELD)
    assert held and set(reported) == set(others.values_list("pk", flat=True))
    assert BetStatus.HELD not in reported.values()
    held_round["fault"].remove()
    services.held_bet_settle(bet_id=held[0].pk, actor=operator, reason="unfrozen")
    [event] = Event.objects.filter(type="bet.settled", data__bet=held[0].pk)
    assert event.data["status"] in ("WON", "PUSH") and event.data["payout"]
