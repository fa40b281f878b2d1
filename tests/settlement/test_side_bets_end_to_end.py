"""A game with every side bet enabled, played through the API and settled by real Celery workers:
every payout is the registry's rule on the dealt cards, as the tests' own oracle reads them.

The oracle (tests/games/engine/side_bet_oracle.py) names each bet's event from the card labels
without games.engine; the payout is then worked out here from the bet's own terms: a push returns
the stake, an event its paytable lists pays stake × multiplier rounded down to the cent, any other
event loses.
"""

import random
from decimal import ROUND_DOWN, Decimal

import pytest

from games.engine import REGISTRY, SIDE_BET_TYPES
from games.models import Bet, Round
from games.services import seed_rotate
from tests.api.helpers import API
from tests.games.engine.side_bet_oracle import EVENT_OF
from tests.settlement.workers import assert_ledger_exact, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# Which events return the stake whatever the paytable: written out here, not read from the registry.
PUSHES = {"PLAYER": {"TIE"}, "BANKER": {"TIE"}, "DRAGON_BONUS_PLAYER": {"NATURAL_TIE"},
          "DRAGON_BONUS_BANKER": {"NATURAL_TIE"}, "BANKER_COMMISSION_FREE": {"TIE"}}
# A main bet's paying event, at its multiplier.
MAIN_PAYS_ON = {"PLAYER": "PLAYER", "BANKER": "BANKER", "TIE": "TIE"}
CENT = Decimal("0.01")
SIDE_BETS = {
    "PLAYER_PAIR": {"PAIR": "12"},
    "BANKER_PAIR": {"PAIR": "11.5"},
    "EITHER_PAIR": {"TWO_PAIRS": "26", "ONE_PAIR": "6"},
    "PERFECT_PAIR": {"TWO_PERFECT_PAIRS": "201", "ONE_PERFECT_PAIR": "26"},
    "DRAGON_BONUS_PLAYER": {"NATURAL_WIN": "2", "WIN_BY_9": "31", "WIN_BY_8": "11", "WIN_BY_7": "7",
                            "WIN_BY_6": "5", "WIN_BY_5": "3", "WIN_BY_4": "2", "NATURAL_TIE": "1"},
    "DRAGON_BONUS_BANKER": {"NATURAL_WIN": "2", "WIN_BY_9": "31", "WIN_BY_8": "11", "WIN_BY_7": "7",
                            "WIN_BY_6": "5", "WIN_BY_5": "3", "WIN_BY_4": "2", "NATURAL_TIE": "1"},
    "BANKER_COMMISSION_FREE": {"BANKER_WIN": "2", "BANKER_WIN_ON_SIX": "1.5", "TIE": "1"},
}


def oracle_round(round_: Round) -> dict:
    return {"player": {"cards": round_.player_cards, "score": round_.player_score},
            "banker": {"cards": round_.banker_cards, "score": round_.banker_score}, "outcome": round_.outcome}


def expected_payout(bet: Bet, event: str, unit: Decimal = CENT) -> Decimal:
    if event in PUSHES.get(bet.bet_type, ()):
        return bet.stake
    if bet.paytable is None:
        paying = {MAIN_PAYS_ON[bet.bet_type]: bet.multiplier}
    else:
        paying = {name: Decimal(value) for name, value in bet.paytable.items()}
    if event not in paying:
        return Decimal(0)
    return (bet.stake * paying[event]).quantize(unit, rounding=ROUND_DOWN)


def test_every_side_bet_through_the_api_settled_by_real_workers(broker, workers, game, integration, operator,
                                                                api_as, funded_account, monkeypatch):
    assert set(SIDE_BETS) == set(SIDE_BET_TYPES), "the test plays every registered side bet"
    # Seeds from a fixed generator, so the sixty rounds are the same every run: with random seeds, a
    # side bet as rare as the perfect pair (3.4 % of rounds) showed only one event in about one run of eight.
    seeds = random.Random(27)
    monkeypatch.setattr("games.services.secrets.token_hex", lambda nbytes: seeds.randbytes(nbytes).hex())
    seed_rotate(game_id=game.pk, actor=operator, reason="seeds from a fixed generator")
    as_operator, as_server = api_as(operator), api_as(integration)
    changed = as_operator.patch(f"{API}/games/{game.slug}/", {"side_bets": SIDE_BETS, "reason": "side bets"})
    assert changed.status_code == 200, changed.content
    assert set(changed.json()["side_bets"]) == set(SIDE_BETS)
    odds = as_operator.get(f"{API}/games/{game.slug}/odds/").json()
    assert set(odds["bets"]) == set(REGISTRY)  # the API shows the exact odds of every bet it takes

    players = [funded_account(f"p{n}", "20000.00") for n in range(4)]
    rng = random.Random(30)
    workers.start(2)
    round_ids = []
    for number in range(60):
        opened = as_server.post(f"{API}/games/{game.slug}/rounds/", {})
        assert opened.status_code == 201, opened.content
        round_id = opened.json()["id"]
        bets = [{"account": rng.choice(players).external_id, "bet_type": bet_type,
                 "stake": str(Decimal(rng.randint(100, 5000)) / 100), "idempotency_key": f"{number}-{bet_type}"}
                for bet_type in REGISTRY]
        single, *rest = bets
        placed = as_server.post(f"{API}/rounds/{round_id}/bets/", single)
        assert placed.status_code == 201, placed.content
        answered = as_server.post(f"{API}/rounds/{round_id}/bets/bulk/", {"bets": rest})
        assert answered.status_code == 200, answered.content
        assert [item["status"] for item in answered.json()["results"]] == [201] * len(rest)
        dealt = as_server.post(f"{API}/rounds/{round_id}/deal/", {})
        assert dealt.status_code == 200, dealt.content
        round_ids.append(round_id)

    wait_for(lambda: Round.objects.filter(pk__in=round_ids, status="SETTLED").count() == len(round_ids), 120,
             "the workers to settle every round")
    seen = {bet_type: set() for bet_type in REGISTRY}
    rounds = {round_.pk: round_ for round_ in Round.objects.filter(pk__in=round_ids)}
    bets = list(Bet.objects.filter(round_id__in=round_ids))
    assert len(bets) == len(round_ids) * len(REGISTRY)
    for bet in bets:
        event = EVENT_OF[bet.bet_type](oracle_round(rounds[bet.round_id]))
        seen[bet.bet_type].add(event)
        assert bet.payout == expected_payout(bet, event), (bet.pk, bet.bet_type, event, bet.payout)
        assert bet.status == ("PUSH" if event in PUSHES.get(bet.bet_type, ()) else "WON" if bet.payout else "LOST")
        assert (bet.paytable is None) == (bet.bet_type not in SIDE_BETS)
        if bet.paytable is not None:
            assert bet.paytable == {event: str(Decimal(value)) for event, value in SIDE_BETS[bet.bet_type].items()}
    # Sixty rounds show more than one event of every bet type, winning and losing.
    assert all(len(events) > 1 for events in seen.values()), seen
    assert_ledger_exact()
