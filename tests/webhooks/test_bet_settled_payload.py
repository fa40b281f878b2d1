"""bet.settled carries why the bet won or lost: the paytable it settled on (a side bet's own, null for a
main bet) and its bet type's event on the round. The deal is chosen (tests/games/side_bet_rounds.py)."""

import pytest

from games.models import Bet
from tests.games.side_bet_rounds import DEALS, SIDE_BETS, enable_side_bets, play_side_bets
from webhooks.models import Event
from webhooks.receivers import bet_data

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("deal", list(DEALS))
def test_each_settled_bet_reports_its_paytable_and_event(endpoint, game, integration, funded_account, deal):
    endpoint(["bet.settled"])
    player = funded_account("player-1", "500.00")
    round_ = play_side_bets(enable_side_bets(game), integration, player, deal)

    reported = {event.data["bet"]: event.data for event in Event.objects.filter(type="bet.settled")}

    bets = list(Bet.objects.filter(round=round_).select_related("account", "round"))
    assert set(reported) == {bet.pk for bet in bets}
    for bet in bets:
        data = reported[bet.pk]
        assert data["event"] == DEALS[deal]["events"][bet.bet_type]
        assert data["paytable"] == SIDE_BETS.get(bet.bet_type)  # None for a main bet
        assert data == bet_data(bet)  # what a held bet's event carries too, settled later


def test_the_payload_keeps_its_fields_and_adds_paytable_and_event(endpoint, game, integration, funded_account):
    endpoint(["bet.settled"])
    player = funded_account("player-1", "500.00")
    play_side_bets(enable_side_bets(game), integration, player, "pair_and_natural", bet_types=("PLAYER_PAIR",))

    [event] = Event.objects.filter(type="bet.settled")

    assert set(event.data) == {"bet", "round", "account", "bet_type", "stake", "multiplier", "paytable", "event",
                               "status", "payout", "currency"}
    assert (event.data["bet_type"], event.data["event"], event.data["paytable"], event.data["status"],
            event.data["payout"]) == ("PLAYER_PAIR", "PAIR", {"PAIR": "12"}, "WON", "120.00")
