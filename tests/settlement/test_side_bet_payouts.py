"""A property over many rounds: whatever the paytables a game sets for its side bets, whatever the
stakes and the currency's places, every bet settles at the registry's rule on the dealt cards, as
the tests' own oracle reads them (tests/games/engine/side_bet_oracle.py), rounded down to the
currency's minor unit."""

from decimal import Decimal
from fractions import Fraction

from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase as HypothesisTestCase

from games import services as game_services
from games.engine import REGISTRY, SIDE_BET_TYPES
from games.models import Bet, Round
from settlement import services
from tests.conftest import Role, make_user
from tests.games.engine.side_bet_oracle import EVENT_OF
from tests.settlement.test_side_bets_end_to_end import PUSHES, expected_payout, oracle_round
from wallet import services as wallet_services

ROUNDS_PER_EXAMPLE = 6
PLACES = {"JPY": 0, "USD": 2, "KWD": 3}

multiplier = st.decimals("1", "1000", places=4).filter(lambda value: value.is_finite())


@st.composite
def side_bets(draw) -> dict:
    """Each side bet offered or not, with a paytable over some of its paying events."""
    offered = {}
    for name in SIDE_BET_TYPES:
        if not draw(st.booleans()):
            continue
        kind = REGISTRY[name]
        paying = [event for event in kind.events if event not in kind.push_events]
        chosen = draw(st.lists(st.sampled_from(paying), min_size=1, unique=True))
        offered[name] = {event: str(draw(multiplier)) for event in chosen}
    return offered


# Paytables drawn at random return far more than any game may (settings.MAX_GAME_RTP): the property
# is settlement's, so the ceiling is lifted here.
@override_settings(MAX_GAME_RTP=Fraction(10**6))
class TestSideBetPayouts(HypothesisTestCase):
    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(side_bets(), st.sampled_from(sorted(PLACES)), st.lists(st.integers(1, 10**6), min_size=60, max_size=60))
    def test_every_payout_is_the_rule_on_the_dealt_cards(self, offered, currency, stakes):
        operator = make_user("op", Role.OPERATOR)
        integration = make_user("gs", Role.INTEGRATION)
        unit = Decimal(1).scaleb(-PLACES[currency])
        game = game_services.game_create(actor=operator, slug="g", name="G", min_bet=unit, max_bet=Decimal(10_000),
                                         currency=currency, side_bets=offered)
        wallet_services.account_create(actor=operator, external_id="a", currency=currency)
        wallet_services.account_adjust(external_id="a", actor=operator, amount=Decimal(10**8), reason="float")
        stakes = iter(stakes)
        round_ids = []
        for number in range(ROUNDS_PER_EXAMPLE):
            round_ = game_services.round_open(game_id=game.pk, actor=integration)
            for bet_type in REGISTRY:
                if not game.offers(bet_type):
                    continue
                stake = min(Decimal(next(stakes, 100)) * unit, Decimal(10_000))
                game_services.bet_place(round_id=round_.pk, account_external_id="a", bet_type=bet_type,
                                        stake=stake, idempotency_key=f"{number}-{bet_type}", client=integration)
            game_services.round_deal(round_id=round_.pk, actor=integration)
            round_ids.append(round_.pk)
        services.settlement_run(round_ids=round_ids, worker="w")

        rounds = {round_.pk: round_ for round_ in Round.objects.filter(pk__in=round_ids)}
        for bet in Bet.objects.filter(round_id__in=round_ids):
            event = EVENT_OF[bet.bet_type](oracle_round(rounds[bet.round_id]))
            paid = expected_payout(bet, event, unit)
            assert bet.payout == paid, (bet.bet_type, bet.paytable, bet.stake, event, bet.payout, paid)
            pushed = event in PUSHES.get(bet.bet_type, ())
            assert bet.status == ("PUSH" if pushed else "WON" if paid else "LOST"), (bet.bet_type, event)
            if bet.paytable is not None:
                assert bet.paytable == {event: str(Decimal(value)) for event, value in offered[bet.bet_type].items()
                                        } | {event: "1" for event in REGISTRY[bet.bet_type].push_events}
