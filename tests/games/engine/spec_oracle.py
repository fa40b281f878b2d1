"""The specification, written a second time for the tests, without games.engine.

Literal and slow on purpose: the shoe is a list that cards are popped from, the draw rules are the
sets of baccarat-rules.md. The engine's fast paths are checked against this.
"""

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
SUITS = ["D", "H", "S", "C"]
VALUE_OF_RANK = {"A": 1, "10": 0, "J": 0, "Q": 0, "K": 0, **{str(n): n for n in range(2, 10)}}

PLAYER_DRAWS_ON = {0, 1, 2, 3, 4, 5}
BANKER_DRAWS_WHEN_PLAYER_STOOD_ON = {0, 1, 2, 3, 4, 5}
# Banker's two-card score → the values of the Player's third card on which the Banker draws.
BANKER_DRAWS_AFTER_PLAYER_ON = {
    0: set(range(10)),
    1: set(range(10)),
    2: set(range(10)),
    3: set(range(10)) - {8},
    4: {2, 3, 4, 5, 6, 7},
    5: {4, 5, 6, 7},
    6: {6, 7},
    7: set(),
}


def label(index: int) -> str:
    k = index % 52
    return RANKS[k // 4] + SUITS[k % 4]


def value(index: int) -> int:
    return VALUE_OF_RANK[RANKS[index % 52 // 4]]


def index_of_value(v: int, deck: int = 0) -> int:
    """The ♦ card of value ``v`` (10♦ for 0, A♦ for 1) in deck ``deck`` of the uncut shoe."""
    rank = {0: "10", 1: "A"}.get(v, str(v))
    return deck * 52 + RANKS.index(rank) * 4


def score(indices) -> int:
    return sum(value(i) for i in indices) % 10


def naive_cut(words, decks: int, positions: int = 6) -> list:
    """PF-1's cut as provably-fair.md words it: pop the drawn index from the list of cards left."""
    shoe = list(range(52 * decks))
    cut = []
    words = iter(words)
    while len(cut) < positions:
        n = len(shoe)
        x = next(words)
        m = x * n
        if m % 2**32 < 2**32 % n:
            continue  # rejected: take the next word
        cut.append(shoe.pop(m // 2**32))
    return cut


def spec_play(shoe) -> dict:
    """A round dealt from ``shoe`` (card indices in shoe order), in the form of pf1-vectors.json."""
    player = [shoe[0], shoe[2]]
    banker = [shoe[1], shoe[3]]
    position = 4
    natural = score(player) >= 8 or score(banker) >= 8
    if not natural:
        if score(player) in PLAYER_DRAWS_ON:
            player_third = shoe[position]
            position += 1
            player.append(player_third)
            banker_draws = value(player_third) in BANKER_DRAWS_AFTER_PLAYER_ON[score(banker)]
        else:
            banker_draws = score(banker) in BANKER_DRAWS_WHEN_PLAYER_STOOD_ON
        if banker_draws:
            banker.append(shoe[position])
            position += 1
    p, b = score(player), score(banker)
    return {
        "cards": [label(i) for i in shoe[:position]],
        "player": {"cards": [label(i) for i in player], "score": p},
        "banker": {"cards": [label(i) for i in banker], "score": b},
        "natural": natural,
        "outcome": "PLAYER" if p > b else "BANKER" if b > p else "TIE",
    }
