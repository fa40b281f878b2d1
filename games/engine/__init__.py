"""The game core: rules, PF-1, payouts and exact odds, in plain Python (no Django import)."""

from .cards import MAX_DECKS, MIN_DECKS, card_label, card_value, hand_score, is_red, label_symbol, label_value
from .odds import Odds, exact_odds, house_edge, odds_report, return_to_player
from .payout import (
    DEFAULT_MULTIPLIERS,
    BetType,
    Multipliers,
    bet_return,
    multiplier_problem,
    settlement_kind,
)
from .pf1 import (
    Dealer,
    Pf1InputError,
    play_round,
    server_seed_hash,
    unbiased_index,
    validate_client_seed,
    validate_decks,
    validate_inputs,
    validate_nonce,
    validate_server_seed,
    verify_round,
)
from .rules import Outcome, RoundResult, dealt_hands, play, result_from_labels, third_card_reasons, winner

__all__ = [
    "MAX_DECKS", "MIN_DECKS", "BetType", "DEFAULT_MULTIPLIERS", "bet_return", "Dealer",
    "Multipliers", "Odds", "Outcome", "Pf1InputError", "RoundResult", "card_label", "card_value",
    "exact_odds", "hand_score", "house_edge", "is_red", "label_symbol", "label_value",
    "dealt_hands", "result_from_labels", "multiplier_problem", "odds_report", "play", "play_round",
    "return_to_player", "server_seed_hash", "settlement_kind", "third_card_reasons",
    "unbiased_index", "validate_client_seed", "validate_decks", "validate_inputs", "validate_nonce",
    "validate_server_seed", "verify_round", "winner",
]
