"""Exact odds of every bet type: published tables, closed forms and brute-force counts.

Every count is out of the N·(N−1)·…·(N−5) ordered six-card deals, the convention of exact_odds and
of the Wizard of Odds' baccarat tables (wizardofodds.com/games/baccarat/appendix/5 and /6). His
pair tables count unordered two-card hands instead: those counts are scaled here by the ways of
ordering each hand's two cards and of filling the other positions, an exact integer factor.
"""

from fractions import Fraction
from itertools import permutations

import pytest

from games.engine import (
    REGISTRY,
    BetKind,
    bet_odds,
    bet_odds_report,
    bet_rtp,
    deal_counts,
    default_paytables,
    event_counts_of_shoe,
    exact_odds,
    make_paytable,
    shoe_faces,
)

from .side_bet_oracle import EVENT_OF
from .spec_oracle import spec_play
from .test_bets import card


def deals(decks: int) -> int:
    n = 52 * decks
    return n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)


def falling(n: int, k: int) -> int:
    return 1 if k == 0 else n * falling(n - 1, k - 1)


def counts(decks: int, bet_type: str) -> dict:
    return bet_odds(decks)[bet_type].counts


# ---- Published tables, to the last digit ----------------------------------------------------------

# Wizard of Odds, "Dragon Bonus", eight decks: every paying row, exact integers.
DRAGON_BONUS_8_DECKS = {
    "DRAGON_BONUS_PLAYER": {
        "WIN_BY_9": 18_409_431_764_992, "WIN_BY_8": 34_097_645_543_424, "WIN_BY_7": 89_590_261_473_280,
        "WIN_BY_6": 141_238_897_317_888, "WIN_BY_5": 166_169_165_987_840, "WIN_BY_4": 186_780_352_174_080,
        "NATURAL_WIN": 812_685_054_124_032, "NATURAL_TIE": 89_325_908_267_520,
    },
    "DRAGON_BONUS_BANKER": {
        "WIN_BY_9": 15_390_342_909_952, "WIN_BY_8": 28_305_092_784_128, "WIN_BY_7": 79_517_099_278_336,
        "WIN_BY_6": 119_200_072_366_080, "WIN_BY_5": 157_275_882_332_160, "WIN_BY_4": 201_147_167_287_296,
        "NATURAL_WIN": 812_685_054_124_032, "NATURAL_TIE": 89_325_908_267_520,
    },
}
# Its "Loss" rows (every other event) have 16 digits and are printed from a spreadsheet's 15.
DRAGON_BONUS_LOSS_8_DECKS = {"DRAGON_BONUS_PLAYER": 3_460_101_558_850_300, "DRAGON_BONUS_BANKER": 3_495_551_656_153_850}
# Its house edges by shoe, to two places of a percent.
DRAGON_BONUS_EDGE = {4: ("2.70", "9.42"), 6: ("2.67", "9.39"), 8: ("2.65", "9.37")}


@pytest.mark.parametrize("bet_type", sorted(DRAGON_BONUS_8_DECKS))
def test_dragon_bonus_8_decks_is_the_published_table(bet_type):
    found = counts(8, bet_type)
    for event, published in DRAGON_BONUS_8_DECKS[bet_type].items():
        assert found[event] == published, event
    loss = sum(found[e] for e in ("WIN_BY_3", "WIN_BY_2", "WIN_BY_1", "TIE", "LOSS"))
    assert str(loss)[:15] == str(DRAGON_BONUS_LOSS_8_DECKS[bet_type])[:15]
    assert sum(found.values()) == deals(8) == 4_998_398_275_503_360


@pytest.mark.parametrize("decks", sorted(DRAGON_BONUS_EDGE))
def test_dragon_bonus_house_edge_by_shoe_is_the_published_one(decks):
    paytables = default_paytables()
    for bet_type, published in zip(("DRAGON_BONUS_PLAYER", "DRAGON_BONUS_BANKER"), DRAGON_BONUS_EDGE[decks],
                                   strict=True):
        edge = 1 - bet_rtp(bet_odds(decks)[bet_type], paytables[bet_type])
        assert f"{float(edge) * 100:.2f}" == published


# Perfect Pairs, version 1 (either hand's first two cards identical in rank and suit) and version 2
# (both hands told apart), in unordered two-card hands: {decks: (total, two perfect pairs, one)}.
PERFECT_PAIRS = {8: (7_379_583_120, 2_101_008, 244_747_776), 6: (2_323_673_820, None, None)}
PERFECT_PAIRS_VERSION_1_WINS = {8: 246_848_784, 6: 74_114_820}


@pytest.mark.parametrize("decks", sorted(PERFECT_PAIRS))
def test_perfect_pair_is_the_published_table(decks):
    n = 52 * decks
    scale = 2 * 2 * (n - 4) * (n - 5)  # each hand's two orders, then positions 5 and 6
    total, two, one = PERFECT_PAIRS[decks]
    found = counts(decks, "PERFECT_PAIR")
    assert deals(decks) == total * scale
    assert found["ONE_PERFECT_PAIR"] + found["TWO_PERFECT_PAIRS"] == PERFECT_PAIRS_VERSION_1_WINS[decks] * scale
    if two is not None:
        assert found["TWO_PERFECT_PAIRS"] == two * scale and found["ONE_PERFECT_PAIR"] == one * scale
    if decks == 8:  # version 1 at 25 to 1, the default: a house edge of 13.03 % (−0.130294)
        rtp = bet_rtp(bet_odds(8)["PERFECT_PAIR"], default_paytables()["PERFECT_PAIR"])
        assert f"{float(1 - rtp):.6f}" == "0.130294"
        version_2 = make_paytable("PERFECT_PAIR", {"ONE_PERFECT_PAIR": "26", "TWO_PERFECT_PAIRS": "251"})
        assert f"{float(1 - bet_rtp(bet_odds(8)['PERFECT_PAIR'], version_2)):.6f}" == "0.066235"


def test_player_and_banker_pair_six_decks_is_the_published_pair_table():
    # Pair Play, six decks: 3,588 pairs among the 48,516 unordered two-card hands (house edge 11.25 % at 11:1).
    n = 312
    scale = 2 * (n - 2) * (n - 3) * (n - 4) * (n - 5)
    for bet_type in ("PLAYER_PAIR", "BANKER_PAIR"):
        found = counts(6, bet_type)
        assert found == {"PAIR": 3_588 * scale, "NO_PAIR": 44_928 * scale}
        assert f"{float(1 - bet_rtp(bet_odds(6)[bet_type], default_paytables()[bet_type])) * 100:.2f}" == "11.25"


# Commission-free ("Nepal") baccarat, banker win on six paying 1 to 2: six decks, every row exact.
def test_commission_free_banker_is_the_published_table():
    assert counts(6, "BANKER_COMMISSION_FREE") == {
        "BANKER_WIN": 355_773_521_203_200, "BANKER_WIN_ON_SIX": 47_322_230_031_360,
        "PLAYER_WIN": 392_220_492_728_832, "TIE": 83_552_962_932_288,
    }
    assert sum(counts(6, "BANKER_COMMISSION_FREE").values()) == 878_869_206_895_680
    eight = counts(8, "BANKER_COMMISSION_FREE")
    assert eight["BANKER_WIN_ON_SIX"] == 269_232_304_455_680 and eight["TIE"] == 475_627_426_473_216
    rtp = bet_rtp(bet_odds(8)["BANKER_COMMISSION_FREE"], default_paytables()["BANKER_COMMISSION_FREE"])
    assert f"{float(1 - rtp):.6f}" == "0.014581"


def test_main_bets_8_decks_are_the_published_combinations():
    assert counts(8, "BANKER") == {
        "PLAYER": 2_230_518_282_592_256, "BANKER": 2_292_252_566_437_888, "TIE": 475_627_426_473_216}


# ---- Closed forms and the main odds, every shoe -------------------------------------------------

@pytest.mark.parametrize("decks", range(1, 9))
def test_every_bet_type_counts_every_deal_once_and_the_main_bets_are_exact_odds(decks):
    odds = bet_odds(decks)
    assert set(odds) == set(REGISTRY)
    for name, found in odds.items():
        assert found.total == deals(decks)
        assert sum(found.counts.values()) == deals(decks)
        assert list(found.counts) == list(REGISTRY[name].events)
    main = exact_odds(decks)
    for bet_type in ("PLAYER", "BANKER", "TIE"):
        assert odds[bet_type].probabilities() == {"PLAYER": main.player, "BANKER": main.banker, "TIE": main.tie}


@pytest.mark.parametrize("decks", range(1, 9))
def test_pairs_equal_their_closed_forms(decks):
    """Pairs depend only on the first four cards: each hand pairs with chance (4D − 1)/(N − 1) by
    rank and (D − 1)/(N − 1) by face; both hands, counted over the two ranks (faces) they take."""
    n = 52 * decks
    four = falling(n, 4)
    one_rank, one_face = 4 * decks, decks
    both_by_rank = 13 * falling(one_rank, 4) + 13 * 12 * falling(one_rank, 2) ** 2
    both_by_face = 52 * falling(one_face, 4) + 52 * 51 * falling(one_face, 2) ** 2
    pair = Fraction(one_rank - 1, n - 1)
    perfect = Fraction(one_face - 1, n - 1)
    odds = bet_odds(decks)
    assert odds["PLAYER_PAIR"].probability("PAIR") == odds["BANKER_PAIR"].probability("PAIR") == pair
    assert odds["EITHER_PAIR"].probability("TWO_PAIRS") == Fraction(both_by_rank, four)
    assert odds["EITHER_PAIR"].probability("NO_PAIR") == 1 - 2 * pair + Fraction(both_by_rank, four)
    assert odds["PERFECT_PAIR"].probability("TWO_PERFECT_PAIRS") == Fraction(both_by_face, four)
    assert odds["PERFECT_PAIR"].probability("NO_PERFECT_PAIR") == 1 - 2 * perfect + Fraction(both_by_face, four)


# ---- Brute force: every ordered deal of small shoes, card by card ----------------------------------

SMALL_SHOES = {
    # Two K♠ and two 5♦ (suited pairs), naturals (9♣, 8♥), draws of every kind.
    "kings-and-fives": ["KS", ("KS", 1), "KH", "5D", ("5D", 1), "9C", "8H", "3S", "AD", "6C"],
    # Sevens for ties and Banker sixes, two 4♥, picture cards worth 0.
    "sevens-and-faces": ["7H", ("7H", 2), "7C", "2D", "QS", "JS", "4H", ("4H", 5), "9D", "6S"],
}


def shoe_indices(cards) -> list:
    return [card(*c) if isinstance(c, tuple) else card(c) for c in cards]


@pytest.mark.parametrize("shoe", sorted(SMALL_SHOES))
def test_exact_counts_equal_a_brute_force_count_through_the_literal_rules(shoe):
    """Every ordered draw of six cards from a ten-card shoe, dealt by the literal specification
    (spec_oracle) and decided by the literal side-bet rules (side_bet_oracle): independent of the
    engine's rules, its live path and its counting."""
    cards = shoe_indices(SMALL_SHOES[shoe])
    brute = {name: {} for name in REGISTRY}
    for drawn in permutations(cards, 6):
        round_ = spec_play(list(drawn))
        for name, rule in EVENT_OF.items():
            event = rule(round_)
            brute[name][event] = brute[name].get(event, 0) + 1
    faces = [0] * 52
    for index in cards:
        faces[index % 52] += 1
    exact = event_counts_of_shoe(tuple(faces))
    for name in REGISTRY:
        assert {e: c for e, c in exact[name].counts.items() if c} == brute[name], name
    assert exact["PERFECT_PAIR"].counts["ONE_PERFECT_PAIR"] > 0 and exact["EITHER_PAIR"].counts["TWO_PAIRS"] > 0


def test_a_shoe_of_faces_is_checked():
    with pytest.raises(ValueError, match="faces"):
        deal_counts((1,) * 51)
    with pytest.raises(ValueError, match="faces"):
        deal_counts((1,) * 51 + (-1,))


# ---- A bet type added as data: the worked example of docs/game/side-bets.md -------------------------

def dragon_7(deal) -> str:
    """EZ Baccarat's Dragon 7: the Banker wins with three cards totalling 7."""
    if deal.outcome == "BANKER" and deal.banker_cards == 3 and deal.banker_score == 7:
        return "DRAGON_7"
    return "NO_DRAGON_7"


DRAGON_7 = BetKind("DRAGON_7", "Dragon 7", dragon_7, ("DRAGON_7", "NO_DRAGON_7"), {"DRAGON_7": 41},
                   description="The Banker wins with a three-card 7 (40 to 1).")


def test_a_new_bet_type_gets_exact_odds_from_its_entry_alone():
    found = event_counts_of_shoe(shoe_faces(8), [DRAGON_7])["DRAGON_7"]
    assert sum(found.counts.values()) == deals(8)
    edge = 1 - bet_rtp(found, make_paytable(DRAGON_7, DRAGON_7.default_paytable))
    assert f"{float(edge) * 100:.2f}" == "7.61"  # the published house edge at 40 to 1, eight decks


def test_odds_report_shape():
    report = bet_odds_report(8)
    assert list(report) == ["decks", "deals", "bets"] and report["deals"] == deals(8)
    assert list(report["bets"]) == list(REGISTRY)
    dragon = report["bets"]["DRAGON_BONUS_PLAYER"]
    assert [row["event"] for row in dragon["events"]] == list(REGISTRY["DRAGON_BONUS_PLAYER"].events)
    row = dragon["events"][1]
    assert row == {"event": "WIN_BY_9", "settlement": "WIN", "multiplier": "31", "combinations": 18_409_431_764_992,
                   "probability": 18_409_431_764_992 / deals(8), "return": float(Fraction(31 * 18_409_431_764_992,
                                                                                        deals(8)))}
    assert dragon["rtp"] == pytest.approx(1 - 0.026517, abs=5e-7)
    assert dragon["rtp"] == pytest.approx(sum(r["return"] for r in dragon["events"]))
    custom = bet_odds_report(8, {"TIE": make_paytable("TIE", {"TIE": "8"})})
    assert custom["bets"]["TIE"]["rtp"] == float(8 * exact_odds(8).tie)
