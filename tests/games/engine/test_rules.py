"""The rules tables of baccarat-rules.md, one case per row or cell, on constructed shoes."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.engine import Outcome, RoundResult, play, third_card_reasons, winner
from games.engine.rules import (
    AFTER_OPENING,
    BANKER_DRAWS_THIRD,
    BOTH_STAND,
    NATURAL,
    NO_THIRD_CARD,
    PLAYER_DRAWS_THIRD,
    TWO_CARD_SCORE,
    banker_draws_after_player,
    play_positions,
    play_scored,
)

from .spec_oracle import (
    BANKER_DRAWS_AFTER_PLAYER_ON,
    BANKER_DRAWS_WHEN_PLAYER_STOOD_ON,
    PLAYER_DRAWS_ON,
    index_of_value,
    label,
    score,
    spec_play,
)


def shoe(*values) -> list:
    """Six card indices with these values, each from its own deck so that no two are the same card."""
    values = list(values) + [0] * (6 - len(values))
    return [index_of_value(v, deck) for deck, v in enumerate(values)]


def deal_from(cards):
    """``deal(count)`` over a fixed list, counting the cards asked for."""
    position = 0

    def deal(count):
        nonlocal position
        position += count
        return cards[position - count:position]

    return deal


# ---- Deal: positions 1–6 -------------------------------------------------------------------

def test_positions_1_to_4_go_player_banker_player_banker():
    cards = shoe(9, 3, 0, 3)  # Player 9 (natural), Banker 6
    result = play_positions(*cards)
    assert result.player_indices == (cards[0], cards[2])
    assert result.banker_indices == (cards[1], cards[3])
    assert result.card_indices == tuple(cards[:4])


@pytest.mark.parametrize(("position", "recipient", "values"), [
    (1, "player", (9, 3, 0, 3)),
    (2, "banker", (9, 3, 0, 3)),
    (3, "player", (9, 3, 0, 3)),
    (4, "banker", (9, 3, 0, 3)),
    (5, "player", (2, 7, 3, 0, 4)),      # Player 5 draws position 5; Banker 7 stands
    (5, "banker", (6, 3, 0, 0, 4)),      # Player 6 stands; Banker 3 draws position 5
    (6, "banker", (1, 0, 1, 0, 9, 5)),   # Player 2 draws position 5; Banker 0 draws position 6
], ids=["1-player", "2-banker", "3-player", "4-banker", "5-player-draws", "5-banker-when-player-stood",
        "6-banker-after-player"])
def test_deal_positions_table(position, recipient, values):
    cards = shoe(*values)
    result = play_positions(*cards)
    hand = result.player_indices if recipient == "player" else result.banker_indices
    assert cards[position - 1] in hand
    assert result.card_indices[position - 1] == cards[position - 1]
    other = result.banker_indices if recipient == "player" else result.player_indices
    assert cards[position - 1] not in other


def test_a_round_deals_only_the_positions_it_uses():
    cards = shoe(9, 3, 0, 3, 5, 5)
    assert len(play_positions(*cards).card_indices) == 4
    cards = shoe(2, 7, 3, 0, 4, 5)
    assert len(play_positions(*cards).card_indices) == 5


# ---- Natural ---------------------------------------------------------------------------------

@pytest.mark.parametrize("player", range(10))
@pytest.mark.parametrize("banker", range(10))
def test_natural_when_either_two_card_score_is_8_or_9(player, banker):
    cards = shoe(player, banker, 0, 0, 1, 1)
    result = play_positions(*cards)
    natural = player >= 8 or banker >= 8
    assert result.natural is natural
    if natural:
        assert len(result.card_indices) == 4
        assert (result.player_score, result.banker_score) == (player, banker)


# ---- Step 1: Player --------------------------------------------------------------------------

@pytest.mark.parametrize(("player", "draws"), [(0, True), (1, True), (2, True), (3, True), (4, True),
                                               (5, True), (6, False), (7, False)])
def test_player_draw_table(player, draws):
    cards = shoe(player, 7, 0, 0, 4, 4)  # Banker 7: never draws, so only the Player's decision shows
    result = play_positions(*cards)
    assert (len(result.player_indices) == 3) is draws
    assert (player in PLAYER_DRAWS_ON) is draws
    if draws:
        assert result.player_indices[2] == cards[4]
        assert result.player_score == (player + 4) % 10
    else:
        assert result.player_score == player


# ---- Step 2: Banker when the Player stood -------------------------------------------------------

@pytest.mark.parametrize("player", [6, 7])
@pytest.mark.parametrize(("banker", "draws"), [(0, True), (1, True), (2, True), (3, True), (4, True),
                                               (5, True), (6, False), (7, False)])
def test_banker_when_player_stood(player, banker, draws):
    cards = shoe(player, banker, 0, 0, 2, 9)
    result = play_positions(*cards)
    assert len(result.player_indices) == 2
    assert (len(result.banker_indices) == 3) is draws
    assert (banker in BANKER_DRAWS_WHEN_PLAYER_STOOD_ON) is draws
    if draws:
        assert result.banker_indices[2] == cards[4]  # position 5, since the Player took none
        assert result.card_indices == tuple(cards[:5])
        assert result.banker_score == (banker + 2) % 10


# ---- Step 3: Banker when the Player drew, every cell of the tableau ------------------------------

TABLEAU = {  # literally the table of baccarat-rules.md: banker score → draws on these values
    0: "0123456789", 1: "0123456789", 2: "0123456789", 3: "012345679",
    4: "234567", 5: "4567", 6: "67", 7: "",
}


@pytest.mark.parametrize("banker", range(8))
@pytest.mark.parametrize("third_value", range(10))
def test_tableau_cell(banker, third_value):
    draws = str(third_value) in TABLEAU[banker]
    assert (third_value in BANKER_DRAWS_AFTER_PLAYER_ON[banker]) is draws  # the oracle agrees
    assert banker_draws_after_player(banker, third_value) is draws
    cards = shoe(0, banker, 3, 0, third_value, 5)  # Player 3 draws position 5
    result = play_positions(*cards)
    assert result.player_indices == (cards[0], cards[2], cards[4])
    assert result.player_score == (3 + third_value) % 10
    if draws:
        assert result.banker_indices == (cards[1], cards[3], cards[5])
        assert result.banker_score == (banker + 5) % 10
        assert len(result.card_indices) == 6
    else:
        assert result.banker_indices == (cards[1], cards[3])
        assert result.banker_score == banker
        assert len(result.card_indices) == 5


# ---- Winner ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("player", "banker", "outcome"), [
    (7, 3, Outcome.PLAYER), (9, 8, Outcome.PLAYER), (1, 0, Outcome.PLAYER),
    (3, 7, Outcome.BANKER), (8, 9, Outcome.BANKER), (0, 1, Outcome.BANKER),
    (5, 5, Outcome.TIE), (0, 0, Outcome.TIE), (9, 9, Outcome.TIE),
])
def test_winner_rules(player, banker, outcome):
    assert winner(player, banker) == outcome
    result = play_positions(*shoe(player, banker, 0, 0, 0, 0))
    if result.natural or (player in (6, 7) and banker in (6, 7)):
        assert result.outcome == outcome


def test_winner_over_every_pair_of_scores():
    for p in range(10):
        for b in range(10):
            expected = Outcome.PLAYER if p > b else Outcome.BANKER if b > p else Outcome.TIE
            assert winner(p, b) == expected


# ---- The whole round against the literal specification ------------------------------------------

@given(st.lists(st.integers(0, 9), min_size=6, max_size=6))
def test_every_six_values_deal_as_the_specification_says(values):
    cards = shoe(*values)
    result = play_positions(*cards)
    assert result.as_dict() == spec_play(cards)
    assert 4 <= len(result.card_indices) <= 6
    assert 0 <= result.player_score <= 9 and 0 <= result.banker_score <= 9


def test_play_asks_a_deal_function_for_the_shoe():
    cards = shoe(0, 0, 3, 3, 1, 1)
    assert play(deal_from(cards)) == play_positions(*cards)


def test_round_result_as_dict_uses_labels():
    cards = shoe(9, 3, 0, 3)
    result = play_positions(*cards)
    assert isinstance(result, RoundResult)
    assert result.cards == [label(i) for i in cards[:4]]
    assert result.as_dict() == {
        "cards": ["9D", "3D", "10D", "3D"],
        "player": {"cards": ["9D", "10D"], "score": 9},
        "banker": {"cards": ["3D", "3D"], "score": 6},
        "natural": True,
        "outcome": "PLAYER",
    }


@pytest.mark.parametrize(("values", "reasons"), [
    ((9, 3, 0, 3), ["Natural (Player 9, Banker 6): no third cards"]),
    ((0, 4, 3, 0, 9, 5), ["Player 3: draws (0–5 draw)", "Banker 4, Player's third card value 9: stands"]),
    ((6, 3, 0, 0, 4), ["Player 6: stands (6–7 stand)", "Banker 3, Player stood: draws (0–5 draw, 6–7 stand)"]),
])
def test_third_card_reasons_name_the_rule_applied(values, reasons):
    assert third_card_reasons(play_positions(*shoe(*values))) == reasons


# ---- The deal's look-up tables against the specification ---------------------------------------

def test_two_card_score_table_is_the_sum_of_values_mod_10_for_every_pair_of_shoe_cards():
    cards = range(52 * 8)
    assert all(TWO_CARD_SCORE[a][b] == score([a, b]) for a in cards for b in cards)


@pytest.mark.parametrize("player", range(10))
@pytest.mark.parametrize("banker", range(10))
def test_what_follows_the_first_four_cards_is_the_specifications_steps_1_and_2(player, banker):
    if player >= 8 or banker >= 8:
        expected = NATURAL
    elif player in PLAYER_DRAWS_ON:
        expected = PLAYER_DRAWS_THIRD
    elif banker in BANKER_DRAWS_WHEN_PLAYER_STOOD_ON:
        expected = BANKER_DRAWS_THIRD
    else:
        expected = BOTH_STAND
    assert AFTER_OPENING[player][banker] == expected
    assert (expected in NO_THIRD_CARD) is (expected not in (PLAYER_DRAWS_THIRD, BANKER_DRAWS_THIRD))


@given(st.lists(st.integers(0, 9), min_size=6, max_size=6))
def test_play_scored_reads_positions_5_and_6_only_when_a_third_card_is_dealt(values):
    cards = shoe(*values)
    result = play_positions(*cards)
    player_two, banker_two = score(cards[0:3:2]), score(cards[1:4:2])
    step = AFTER_OPENING[player_two][banker_two]
    if step in NO_THIRD_CARD:
        assert play_scored(*cards[:4], None, None, player_two, banker_two, step) == result
        assert len(result.card_indices) == 4
    else:
        assert play_scored(*cards, player_two, banker_two, step) == result
        assert len(result.card_indices) >= 5
