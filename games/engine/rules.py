"""The rules of Punto Banco as tables that read like the specification (baccarat-rules.md)."""

from typing import NamedTuple

from .cards import _LABEL_TO_INDEX, LABELS, MAX_DECKS, VALUES, card_value, hand_score


class Outcome:
    PLAYER = "PLAYER"
    BANKER = "BANKER"
    TIE = "TIE"

    ALL = (PLAYER, BANKER, TIE)


# A two-card score of 8 or 9 on either hand is a natural: no third cards.
NATURAL_SCORES = frozenset({8, 9})

# Step 1 — Player: 0–5 draws (position 5), 6–7 stands.
PLAYER_DRAWS = {0: True, 1: True, 2: True, 3: True, 4: True, 5: True, 6: False, 7: False}

# Step 2 — Banker when the Player stood: 0–5 draws (position 5), 6–7 stands.
BANKER_DRAWS_WHEN_PLAYER_STOOD = {
    0: True, 1: True, 2: True, 3: True, 4: True, 5: True, 6: False, 7: False,
}

# Step 3 — Banker when the Player drew: by the Banker's two-card score, the values (0–9) of the
# Player's third card on which the Banker draws (position 6), and those on which it stands.
BANKER_TABLEAU = {
    #   score: (draws when Player's third card is,   stands when it is)
    0: (frozenset(range(10)),                       frozenset()),
    1: (frozenset(range(10)),                       frozenset()),
    2: (frozenset(range(10)),                       frozenset()),
    3: (frozenset({0, 1, 2, 3, 4, 5, 6, 7, 9}),    frozenset({8})),
    4: (frozenset({2, 3, 4, 5, 6, 7}),             frozenset({0, 1, 8, 9})),
    5: (frozenset({4, 5, 6, 7}),                   frozenset({0, 1, 2, 3, 8, 9})),
    6: (frozenset({6, 7}),                         frozenset({0, 1, 2, 3, 4, 5, 8, 9})),
    7: (frozenset(),                               frozenset(range(10))),
}

# Flattened for the deal: [banker score][player's third card value] → draws?
_BANKER_DRAWS_AFTER_PLAYER = tuple(
    tuple(value in BANKER_TABLEAU[score][0] for value in range(10)) for score in range(8)
)


def winner(player_score: int, banker_score: int) -> str:
    """Higher final score wins; equal scores tie."""
    if player_score > banker_score:
        return Outcome.PLAYER
    if banker_score > player_score:
        return Outcome.BANKER
    return Outcome.TIE


def banker_draws_after_player(banker_score: int, player_third_value: int) -> bool:
    return _BANKER_DRAWS_AFTER_PLAYER[banker_score][player_third_value]


class RoundResult(NamedTuple):
    """A dealt round: cards as shoe indices in dealt order, hands, scores and the outcome."""

    card_indices: tuple
    player_indices: tuple
    banker_indices: tuple
    player_score: int
    banker_score: int
    natural: bool
    outcome: str

    @property
    def cards(self) -> list:
        return [_SHOE_LABELS[i] for i in self.card_indices]

    def as_dict(self) -> dict:
        """The round in the form of `expected` in pf1-vectors.json (without the seed hash)."""
        labels = _SHOE_LABELS
        return {
            "cards": [labels[i] for i in self.card_indices],
            "player": {"cards": [labels[i] for i in self.player_indices], "score": self.player_score},
            "banker": {"cards": [labels[i] for i in self.banker_indices], "score": self.banker_score},
            "natural": self.natural,
            "outcome": self.outcome,
        }


# The value and the label (card_value, card_label) of every card index of the largest shoe, so the
# deal needs no modulo.
_SHOE_VALUES = VALUES * MAX_DECKS
_SHOE_LABELS = LABELS * MAX_DECKS

# [first card][second card] → the two-card score, for every card index of the largest shoe: ten
# distinct rows (one per card value), so the deal neither adds values nor takes a modulo.
_SCORE_ROWS = tuple(tuple((first + value) % 10 for value in _SHOE_VALUES) for first in range(10))
TWO_CARD_SCORE = tuple(_SCORE_ROWS[value] for value in _SHOE_VALUES)

# winner() of every pair of final scores, looked up by the deal.
_WINNERS = tuple(tuple(winner(p, b) for b in range(10)) for p in range(10))

# RoundResult(...) without the Python-level __new__ that NamedTuple generates (which does just
# this): the deal builds one result per round. The fields go as one tuple, in declaration order.
_new_result = tuple.__new__


def play(deal) -> RoundResult:
    """Deal one round; ``deal(count)`` returns the next ``count`` cards of the shoe."""
    return play_positions(*deal(6))


def play_positions(c1: int, c2: int, c3: int, c4: int, c5: int, c6: int) -> RoundResult:
    """The round dealt from a shoe whose first six positions (after the cut) hold these cards.

    Positions 1 and 3 go to the Player, 2 and 4 to the Banker; position 5 is the first third card
    (the Player's if the Player draws, else the Banker's), position 6 the Banker's third card after
    the Player drew. A round deals 4 to 6 of them; those it does not deal are simply not used.
    """
    player_two = TWO_CARD_SCORE[c1][c3]
    banker_two = TWO_CARD_SCORE[c2][c4]
    return play_scored(c1, c2, c3, c4, c5, c6, player_two, banker_two, AFTER_OPENING[player_two][banker_two])


# What follows the first four cards, by the two-card scores: steps 1 and 2 above, read once for
# every pair of scores so that the deal looks them up.
NATURAL = "natural"                  # no third cards
BOTH_STAND = "both stand"            # no third cards
PLAYER_DRAWS_THIRD = "player draws"  # position 5, then the Banker by the tableau (position 6)
BANKER_DRAWS_THIRD = "banker draws"  # position 5


def _after_opening(player_two: int, banker_two: int) -> str:
    if player_two in NATURAL_SCORES or banker_two in NATURAL_SCORES:
        return NATURAL
    if PLAYER_DRAWS[player_two]:
        return PLAYER_DRAWS_THIRD
    if BANKER_DRAWS_WHEN_PLAYER_STOOD[banker_two]:
        return BANKER_DRAWS_THIRD
    return BOTH_STAND


# [player two-card score][banker two-card score] → what follows
AFTER_OPENING = tuple(tuple(_after_opening(p, b) for b in range(10)) for p in range(10))
NO_THIRD_CARD = (NATURAL, BOTH_STAND)


def play_scored(c1: int, c2: int, c3: int, c4: int, c5, c6, player_two: int, banker_two: int,
                step: str) -> RoundResult:
    """``play_positions`` with the two-card scores and what follows them (AFTER_OPENING) already
    known. Positions 5 and 6 are read only when a third card is dealt (the step is not in
    NO_THIRD_CARD): a deal that computes cards as needed passes None for them."""
    if step is PLAYER_DRAWS_THIRD:
        value = _SHOE_VALUES
        player_third = value[c5]
        player_score = (player_two + player_third) % 10
        if _BANKER_DRAWS_AFTER_PLAYER[banker_two][player_third]:
            banker_score = (banker_two + value[c6]) % 10
            return _new_result(RoundResult, (
                (c1, c2, c3, c4, c5, c6), (c1, c3, c5), (c2, c4, c6), player_score, banker_score,
                False, _WINNERS[player_score][banker_score],
            ))
        return _new_result(RoundResult, (
            (c1, c2, c3, c4, c5), (c1, c3, c5), (c2, c4), player_score, banker_two, False,
            _WINNERS[player_score][banker_two],
        ))
    if step is BANKER_DRAWS_THIRD:
        banker_score = (banker_two + _SHOE_VALUES[c5]) % 10
        return _new_result(RoundResult, (
            (c1, c2, c3, c4, c5), (c1, c3), (c2, c4, c5), player_two, banker_score, False,
            _WINNERS[player_two][banker_score],
        ))
    return _new_result(RoundResult, (
        (c1, c2, c3, c4), (c1, c3), (c2, c4), player_two, banker_two, step is NATURAL,
        _WINNERS[player_two][banker_two],
    ))


def third_card_reasons(result: RoundResult) -> list:
    """Why each hand drew or stood, in the words of the tableau, for round recall pages."""
    values = [card_value(i) for i in result.player_indices]
    player_two = (values[0] + values[1]) % 10
    banker_values = [card_value(i) for i in result.banker_indices]
    banker_two = (banker_values[0] + banker_values[1]) % 10
    if player_two in NATURAL_SCORES or banker_two in NATURAL_SCORES:
        return [f"Natural (Player {player_two}, Banker {banker_two}): no third cards"]
    reasons = []
    if PLAYER_DRAWS[player_two]:
        reasons.append(f"Player {player_two}: draws (0–5 draw)")
        third_value = values[2]
        verb = "draws" if banker_draws_after_player(banker_two, third_value) else "stands"
        reasons.append(f"Banker {banker_two}, Player's third card value {third_value}: {verb}")
    else:
        reasons.append(f"Player {player_two}: stands (6–7 stand)")
        verb = "draws" if BANKER_DRAWS_WHEN_PLAYER_STOOD[banker_two] else "stands"
        reasons.append(f"Banker {banker_two}, Player stood: {verb} (0–5 draw, 6–7 stand)")
    return reasons


def result_from_labels(cards, player_cards, banker_cards) -> RoundResult:
    """A deal stored as labels (the cards in dealt order and each hand's, as ``RoundResult.as_dict``
    writes them) as a RoundResult again; the scores, the natural and the outcome follow from the
    cards. A label names no deck of the shoe: the indices are those of the first deck."""
    player = tuple(_LABEL_TO_INDEX[label] for label in player_cards)
    banker = tuple(_LABEL_TO_INDEX[label] for label in banker_cards)
    player_score = hand_score(VALUES[i] for i in player)
    banker_score = hand_score(VALUES[i] for i in banker)
    natural = (hand_score(VALUES[i] for i in player[:2]) in NATURAL_SCORES
               or hand_score(VALUES[i] for i in banker[:2]) in NATURAL_SCORES)
    return RoundResult(tuple(_LABEL_TO_INDEX[label] for label in cards), player, banker, player_score,
                       banker_score, natural, winner(player_score, banker_score))


def dealt_hands(result: RoundResult) -> tuple:
    """The hand each card went to, in dealt order: Player, Banker, Player, Banker, then the third
    cards, the Player's first when it drew."""
    return ((Outcome.PLAYER, Outcome.BANKER) * 2 + (Outcome.PLAYER,) * (len(result.player_indices) == 3)
            + (Outcome.BANKER,) * (len(result.banker_indices) == 3))
