"""Rounds with side bets on chosen deals, for the tests of how bets show why they won or lost.

A round is opened, bet on (``bet_place``) and dealt by PF-1 (``rounds_deal``); its cards are then
replaced by a chosen deal (the scores, natural and outcome following from them) before
``settlement_run`` settles it, so that each bet's event is known without reading the engine.
"""

from games import services as game_services
from games.models import Round
from settlement import services as settlement_services

SIDE_BETS = {"PLAYER_PAIR": {"PAIR": "12"},
             "DRAGON_BONUS_BANKER": {"NATURAL_WIN": "2", "WIN_BY_9": "31", "NATURAL_TIE": "1"}}

# Each deal: cards in dealt order, the Player's, the Banker's, scores, natural, outcome; and the event
# of each bet type the tests bet on, written out by hand.
DEALS = {
    # Player 8♥ 8♦ (a pair, 6); Banker 9♠ K♣ (a natural 9).
    "pair_and_natural": {
        "cards": ["8H", "9S", "8D", "KC"], "player_cards": ["8H", "8D"], "banker_cards": ["9S", "KC"],
        "player_score": 6, "banker_score": 9, "natural": True, "outcome": "BANKER",
        "events": {"PLAYER": "BANKER", "BANKER": "BANKER", "PLAYER_PAIR": "PAIR",
                   "DRAGON_BONUS_BANKER": "NATURAL_WIN"},
    },
    # Player 9♥ K♦ and Banker 9♠ Q♣: two natural 9s.
    "natural_tie": {
        "cards": ["9H", "9S", "KD", "QC"], "player_cards": ["9H", "KD"], "banker_cards": ["9S", "QC"],
        "player_score": 9, "banker_score": 9, "natural": True, "outcome": "TIE",
        "events": {"PLAYER": "TIE", "BANKER": "TIE", "PLAYER_PAIR": "NO_PAIR", "DRAGON_BONUS_BANKER": "NATURAL_TIE"},
    },
    # Player K♥ Q♦ J♠ (0, drew); Banker 2♣ 3♥ (5, stands on the Player's third card 0): Banker by 5.
    "banker_by_five": {
        "cards": ["KH", "2C", "QD", "3H", "JS"], "player_cards": ["KH", "QD", "JS"], "banker_cards": ["2C", "3H"],
        "player_score": 0, "banker_score": 5, "natural": False, "outcome": "BANKER",
        "events": {"PLAYER": "BANKER", "BANKER": "BANKER", "PLAYER_PAIR": "NO_PAIR", "DRAGON_BONUS_BANKER": "WIN_BY_5"},
    },
}
BET_TYPES = ("PLAYER", "BANKER", "PLAYER_PAIR", "DRAGON_BONUS_BANKER")


def enable_side_bets(game):
    game.side_bets = SIDE_BETS
    game.full_clean()
    game.save()
    return game


def open_with_bets(game, client, account, stake="10.00", bet_types=BET_TYPES) -> Round:
    """An open round with one bet of each of ``bet_types`` by ``account``."""
    round_ = game_services.round_open(game_id=game.pk, actor=client)
    for bet_type in bet_types:
        game_services.bet_place(round_id=round_.pk, account_external_id=account.external_id, bet_type=bet_type,
                                stake=stake, idempotency_key=f"r{round_.pk}-{bet_type}", client=client)
    return round_


def deal_as(round_: Round, client, deal: str) -> Round:
    """Deal the round by PF-1, then give it the chosen deal's cards (not yet settled)."""
    game_services.rounds_deal(round_ids=[round_.pk], actor=client)
    chosen = {name: value for name, value in DEALS[deal].items() if name != "events"}
    Round.objects.filter(pk=round_.pk).update(**chosen)
    round_.refresh_from_db()
    return round_


def play_side_bets(game, client, account, deal: str, **bets) -> Round:
    """A round bet on, dealt as ``deal`` and settled."""
    round_ = deal_as(open_with_bets(game, client, account, **bets), client, deal)
    settlement_services.settlement_run(round_ids=[round_.pk])
    round_.refresh_from_db()
    return round_
