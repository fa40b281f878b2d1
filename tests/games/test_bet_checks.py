"""A bet's checks are part of its one write statement (games/writes.py), while the plain path
(settings.BET_IN_ONE_STATEMENT off) and every refusal's wording use the Python checks
(games.services._refusal). These tests hold the two to the same answers, either way: a bet is
written exactly when the Python checks find nothing to refuse, and a refused bet is refused with the
error they name.
"""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, event, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from core.errors import Conflict
from games import selectors, services
from games.choices import BetType, GameStatus, Outcome, RoundStatus
from games.engine import MAIN_BET_TYPES
from games.models import Bet, GameInstance, Round
from wallet.models import Account, LedgerEntry

pytestmark = [pytest.mark.services]

ROUND_STATES = {
    RoundStatus.OPEN: {},
    RoundStatus.DEALT: {"outcome": Outcome.TIE, "dealt_at": timezone.now()},
    RoundStatus.VOID: {"voided_at": timezone.now(), "void_reason": "test"},
}
AMOUNTS = [Decimal(text) for text in ("0.01", "0.99", "1.00", "5.00", "9.99", "10.00", "10.01", "50.00")]


class _RolledBack(Exception):
    pass


@st.composite
def situations(draw):
    """A bet that passes every check, then as many of them broken as drawn (often none or one, so
    that each check is met failing on its own)."""
    broken = draw(st.sets(st.sampled_from(["round", "game", "below", "above", "currency", "unknown", "balance"]),
                          max_size=2))
    low, high = sorted(draw(st.lists(st.sampled_from(AMOUNTS[1:-1]), min_size=2, max_size=2)))
    stake = draw(st.sampled_from([amount for amount in AMOUNTS if low <= amount <= high]))
    if "below" in broken:
        stake = draw(st.sampled_from([amount for amount in AMOUNTS if amount < low]))
    elif "above" in broken:
        stake = draw(st.sampled_from([amount for amount in AMOUNTS if amount > high]))
    covered = [amount for amount in AMOUNTS if amount >= stake]
    short = [amount for amount in AMOUNTS if amount < stake] or [Decimal("0.00")]
    return {
        "round_status": draw(st.sampled_from([RoundStatus.DEALT, RoundStatus.VOID])) if "round" in broken
        else RoundStatus.OPEN,
        "game_status": draw(st.sampled_from(GameStatus.values[1:])) if "game" in broken else GameStatus.ACTIVE,
        "min_bet": low, "max_bet": high,
        "account": "nobody" if "unknown" in broken else "eur" if "currency" in broken else "usd",
        "balance": draw(st.sampled_from(short if "balance" in broken else covered)),
        "stake": stake,
        "bet_type": draw(st.sampled_from(BetType.values)),
    }


def _refusal_words(error) -> tuple:
    if isinstance(error, Conflict):
        return "conflict", error.field, error.message
    return "invalid", error.message_dict


@pytest.mark.parametrize("in_one_statement", [True, False], ids=["one statement", "plain path"])
@hypothesis_settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(situation=situations())
def test_the_statement_writes_exactly_when_the_python_checks_pass(postgres, settings, game, integration,
                                                                   in_one_statement, situation):
    settings.BET_IN_ONE_STATEMENT = in_one_statement
    try:
        with transaction.atomic():
            round_ = services.round_open(game_id=game.pk, actor=integration)
            GameInstance.objects.filter(pk=game.pk).update(
                status=situation["game_status"], min_bet=situation["min_bet"], max_bet=situation["max_bet"],
                player_multiplier=Decimal("2.0"), banker_multiplier=Decimal("1.95"), tie_multiplier=Decimal("8.5"))
            Round.objects.filter(pk=round_.pk).update(status=situation["round_status"],
                                                      **ROUND_STATES[situation["round_status"]])
            Account.objects.create(external_id="usd", currency="USD", balance=situation["balance"])
            Account.objects.create(external_id="eur", currency="EUR", balance=situation["balance"])
            wanted = services.WantedBet(situation["account"], situation["bet_type"], situation["stake"], "checked")
            read_round, account = selectors.round_for_bet(round_id=round_.pk,
                                                          account_external_id=wanted.account_external_id)
            expected = services._refusal(read_round, account, account and account.balance, wanted)
            try:
                bet, created = services.bet_place(
                    round_id=round_.pk, account_external_id=wanted.account_external_id, bet_type=wanted.bet_type,
                    stake=str(wanted.stake), idempotency_key="checked", client=integration)
            except (ValidationError, Conflict) as refused:
                event("refused")
                assert expected is not None, situation
                assert _refusal_words(refused) == _refusal_words(expected), situation
                assert not Bet.objects.filter(round=round_).exists()
                assert Account.objects.get(external_id="usd").balance == situation["balance"]
            else:
                event("accepted")
                assert expected is None, (situation, expected)
                assert created
                stored = Bet.objects.select_related("round__game", "account").get(pk=bet.pk)
                assert stored.multiplier == read_round.game.multipliers.for_bet(wanted.bet_type)
                assert (bet.multiplier, bet.round.game.slug, bet.account.balance) == (
                    stored.multiplier, stored.round.game.slug, stored.account.balance)
                assert stored.account.balance == situation["balance"] - situation["stake"]
                assert LedgerEntry.objects.get(bet_id=stored.pk).amount == -situation["stake"]
            raise _RolledBack
    except _RolledBack:
        pass


def test_each_bet_type_takes_the_multiplier_the_game_names_for_it(game):
    game.player_multiplier, game.banker_multiplier, game.tie_multiplier = (
        Decimal("2.1"), Decimal("1.9"), Decimal("8.0"))
    for bet_type, field in GameInstance.MULTIPLIER_FIELDS.items():
        assert getattr(game, field) == game.multipliers.for_bet(bet_type)
    assert set(GameInstance.MULTIPLIER_FIELDS) == set(MAIN_BET_TYPES)
