"""Paytables: event → multiplier, stake included; checked, normalised and settled exactly."""

from decimal import Decimal

import pytest

from games.engine import (
    DEFAULT_MULTIPLIERS,
    REGISTRY,
    BetType,
    Multipliers,
    Outcome,
    PaytableError,
    bet_return,
    default_paytables,
    main_paytables,
    make_paytable,
    paytable_as_json,
    paytable_problems,
    paytable_return,
    settlement_kind,
    settlement_of,
)

HUNDRED = Decimal("100.00")


def test_every_default_paytable_is_valid_and_pays_at_least_the_stake():
    for name, paytable in default_paytables().items():
        kind = REGISTRY[name]
        assert paytable_problems(kind, kind.default_paytable) == {}
        assert list(paytable) == [event for event in kind.events if event in paytable]
        for event, multiplier in paytable.items():
            assert isinstance(multiplier, Decimal)
            assert multiplier == 1 if event in kind.push_events else multiplier >= 1


def test_the_main_bets_defaults_are_the_seeds_multipliers_with_the_tie_push():
    defaults = default_paytables()
    assert {name: dict(defaults[name]) for name in BetType.ALL} == {
        name: dict(paytable) for name, paytable in main_paytables(DEFAULT_MULTIPLIERS).items()}
    assert dict(defaults["PLAYER"]) == {"PLAYER": Decimal("2.0"), "TIE": Decimal(1)}


def test_the_dragon_bonus_default_is_the_standard_table_as_total_returns():
    assert paytable_as_json(default_paytables()["DRAGON_BONUS_PLAYER"]) == {
        "NATURAL_WIN": "2", "WIN_BY_9": "31", "WIN_BY_8": "11", "WIN_BY_7": "7", "WIN_BY_6": "5",
        "WIN_BY_5": "3", "WIN_BY_4": "2", "NATURAL_TIE": "1",
    }
    assert default_paytables()["BANKER_COMMISSION_FREE"]["BANKER_WIN_ON_SIX"] == Decimal("1.5")


@pytest.mark.parametrize(("paytable", "field", "words"), [
    ({"WIN_BY_9": "0.5"}, "WIN_BY_9", "at least 1.0"),
    ({"WIN_BY_9": "abc"}, "WIN_BY_9", "decimal number"),
    ({"WIN_BY_9": 30.5}, "WIN_BY_9", "decimal number"),          # no binary floats
    ({"WIN_BY_9": "1000.5"}, "WIN_BY_9", "at most 1000"),
    ({"WIN_BY_9": "2.12345"}, "WIN_BY_9", "decimal places"),
    ({"WIN_BY_10": "2"}, "WIN_BY_10", "not an event of DRAGON_BONUS_PLAYER"),
    ({"NATURAL_TIE": "2", "WIN_BY_9": "31"}, "NATURAL_TIE", "exactly 1.0"),
    ({"NATURAL_TIE": "1"}, "paytable", "at least one event"),
    ({}, "paytable", "at least one event"),
    (["WIN_BY_9"], "paytable", "must map events"),
])
def test_a_bad_paytable_names_its_field(paytable, field, words):
    problems = paytable_problems(REGISTRY["DRAGON_BONUS_PLAYER"], paytable)
    assert field in problems and words in problems[field]
    with pytest.raises(PaytableError) as raised:
        make_paytable("DRAGON_BONUS_PLAYER", paytable)
    assert raised.value.field in problems


def test_make_paytable_normalises_order_decimals_and_pushes():
    paytable = make_paytable("DRAGON_BONUS_BANKER", {"WIN_BY_9": 50, "NATURAL_WIN": "1.5"})
    assert dict(paytable) == {"NATURAL_WIN": Decimal("1.5"), "WIN_BY_9": Decimal(50), "NATURAL_TIE": Decimal(1)}
    with pytest.raises(TypeError):
        paytable["WIN_BY_9"] = Decimal(100)


@pytest.mark.parametrize(("event", "settled", "returned"), [
    ("WIN_BY_9", "WIN", "3100.00"),
    ("NATURAL_WIN", "WIN", "200.00"),
    ("WIN_BY_4", "WIN", "200.00"),
    ("NATURAL_TIE", "PUSH", "100.00"),
    ("WIN_BY_3", "LOSE", "0.00"),
    ("TIE", "LOSE", "0.00"),
    ("LOSS", "LOSE", "0.00"),
])
def test_settlement_of_a_dragon_bonus_bet(event, settled, returned):
    paytable = default_paytables()["DRAGON_BONUS_PLAYER"]
    assert settlement_of("DRAGON_BONUS_PLAYER", paytable, event)[0] == settled
    assert paytable_return("DRAGON_BONUS_PLAYER", paytable, event, HUNDRED) == Decimal(returned)


def test_a_return_is_rounded_down_to_the_cent():
    paytable = default_paytables()["BANKER_COMMISSION_FREE"]
    returned = paytable_return("BANKER_COMMISSION_FREE", paytable, "BANKER_WIN_ON_SIX", Decimal("10.01"))
    assert returned == Decimal("15.01")  # 15.015
    assert paytable_return("BANKER_COMMISSION_FREE", paytable, "TIE", Decimal("10.01")) == Decimal("10.01")


def test_an_unknown_event_is_refused():
    with pytest.raises(ValueError, match="not an event of PLAYER_PAIR"):
        settlement_of("PLAYER_PAIR", default_paytables()["PLAYER_PAIR"], "TWO_PAIRS")


@pytest.mark.parametrize("multipliers", [
    DEFAULT_MULTIPLIERS, Multipliers(Decimal("1.9"), Decimal("1"), Decimal("8.5"))])
def test_main_paytables_settle_as_bet_return_does(multipliers):
    paytables = main_paytables(multipliers)
    for bet_type in BetType.ALL:
        for outcome in Outcome.ALL:
            for stake in (HUNDRED, Decimal("10.01"), Decimal("0.01")):
                assert settlement_of(bet_type, paytables[bet_type], outcome)[0] == settlement_kind(bet_type, outcome)
                assert paytable_return(bet_type, paytables[bet_type], outcome, stake) == bet_return(
                    bet_type, stake, outcome, multipliers.for_bet(bet_type))
