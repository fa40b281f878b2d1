"""The game core: rules, PF-1, payouts and exact odds, in plain Python (no Django import)."""

from .bet_odds import EventCounts, bet_odds, bet_odds_report, bet_rtp, deal_counts, event_counts_of_shoe, shoe_faces
from .bets import (
    BET_TYPES,
    MAIN_BET_TYPES,
    REGISTRY,
    SIDE_BET_TYPES,
    BetKind,
    Deal,
    bet_kind,
    bet_type_problem,
    event_of,
    events_of,
    observe,
    round_events,
)
from .cards import MAX_DECKS, MIN_DECKS, card_label, card_value, hand_score, is_red, label_symbol, label_value
from .odds import Odds, exact_odds, house_edge, odds_report, return_to_player
from .outcomes import BetOutcome, bet_outcome, dealt_event, event_label, multiplier_text, paytable_lines
from .payout import (
    DEFAULT_MULTIPLIERS,
    BetType,
    Multipliers,
    bet_return,
    multiplier_problem,
    settlement_kind,
)
from .paytables import (
    PaytableError,
    bet_paytable,
    bet_settlement,
    default_paytables,
    expected_return,
    headline_multiplier,
    main_paytables,
    make_paytable,
    paytable_as_json,
    paytable_problems,
    paytable_return,
    settlement_of,
    side_bets_as_json,
    side_bets_problems,
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
    "BET_TYPES", "MAIN_BET_TYPES", "REGISTRY", "SIDE_BET_TYPES", "bet_paytable", "bet_settlement",
    "BetOutcome", "bet_outcome", "dealt_event", "event_label", "multiplier_text", "paytable_lines",
    "headline_multiplier", "side_bets_as_json", "side_bets_problems", "BetKind", "Deal", "EventCounts",
    "PaytableError", "bet_kind", "bet_odds", "bet_type_problem",
    "bet_odds_report", "bet_rtp", "deal_counts", "default_paytables", "event_counts_of_shoe", "event_of",
    "events_of", "expected_return", "main_paytables", "make_paytable", "observe", "paytable_as_json",
    "paytable_problems", "paytable_return", "round_events", "settlement_of", "shoe_faces",
    "MAX_DECKS", "MIN_DECKS", "BetType", "DEFAULT_MULTIPLIERS", "bet_return", "Dealer",
    "Multipliers", "Odds", "Outcome", "Pf1InputError", "RoundResult", "card_label", "card_value",
    "exact_odds", "hand_score", "house_edge", "is_red", "label_symbol", "label_value",
    "dealt_hands", "result_from_labels", "multiplier_problem", "odds_report", "play", "play_round",
    "return_to_player", "server_seed_hash", "settlement_kind", "third_card_reasons",
    "unbiased_index", "validate_client_seed", "validate_decks", "validate_inputs", "validate_nonce",
    "validate_server_seed", "verify_round", "winner",
]
