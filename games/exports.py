"""CSV exports for regulators: rounds, bets, and the ledger entries with the rounds of their bets.

The streaming and the cell formats are the back-office's (``backoffice.admin.exports``); here are
the columns. A seed pair's server seed appears only through ``SeedPair.revealed_server_seed``:
empty until the pair is revealed, never the raw field.

The ledger is the wallet's, but its export names each entry's round, which only the games app
knows: it is served by the games' extension of the ledger admin (``games.admin.ledger``).
"""

from django.db.models import OuterRef, Subquery
from django.db.models.functions import JSONObject

from backoffice.admin.exports import Export, boolean, optional, text, when
from core.currencies import amount_text
from games.engine import dealt_event
from games.models import Bet


def _money(amount, currency: str | None = None) -> str:
    """An amount at its currency's places (JPY 100, USD 10.00), or, without one, exactly with at
    least two; empty for none."""
    return "" if amount is None else amount_text(amount, currency)


def _cards(labels) -> str:
    return " ".join(labels or ())


def _round_row(round_) -> list:
    pair = round_.seed_pair
    return [
        round_.pk, round_.game.slug, round_.status, when(round_.opened_at), when(round_.dealt_at),
        when(round_.settled_at), when(round_.voided_at), text(round_.void_reason),
        pair.pk, pair.server_seed_hash, text(pair.client_seed), round_.nonce, round_.decks,
        _cards(round_.cards), _cards(round_.player_cards), optional(round_.player_score),
        _cards(round_.banker_cards), optional(round_.banker_score), boolean(round_.natural),
        round_.outcome or "", when(pair.revealed_at), pair.revealed_server_seed or "",
        round_.settlement_failures,
    ]


ROUNDS_EXPORT = Export(
    name="rounds",
    header=("round_id", "game", "status", "opened_at", "dealt_at", "settled_at", "voided_at", "void_reason",
            "seed_pair_id", "server_seed_hash", "client_seed", "nonce", "decks", "cards", "player_cards",
            "player_score", "banker_cards", "banker_score", "natural", "outcome", "seed_revealed_at",
            "server_seed_revealed", "settlement_failures"),
    row=_round_row,
    select_related=("game", "seed_pair"),
)


def _bet_row(bet) -> list:
    return [
        bet.pk, bet.round_id, bet.round.game.slug, text(bet.account.external_id), bet.account.currency,
        text(bet.client.get_username()), bet.bet_type, _money(bet.stake, bet.account.currency), bet.multiplier,
        bet.status, _money(bet.payout, bet.account.currency),
        text(bet.idempotency_key), when(bet.placed_at), when(bet.settled_at), bet.round.status,
        bet.round.outcome or "",
        dealt_event(bet.bet_type, bet.round.cards, bet.round.player_cards, bet.round.banker_cards) or "",
    ]


BETS_EXPORT = Export(
    name="bets",
    header=("bet_id", "round_id", "game", "account", "currency", "client", "bet_type", "stake", "multiplier",
            "status", "payout", "idempotency_key", "placed_at", "settled_at", "round_status", "round_outcome",
            "event"),
    row=_bet_row,
    select_related=("round__game", "account", "client"),
)


def _ledger_row(entry) -> list:
    return [
        entry.pk, when(entry.created_at), text(entry.account.external_id), entry.account.currency, entry.kind,
        _money(entry.amount, entry.account.currency), _money(entry.balance_after, entry.account.currency),
        optional(entry.bet_id), optional(entry.bet_round_id), _bet_event(entry.bet_deal), text(entry.reason),
    ]


def _bet_event(deal) -> str:
    """The event of an entry's bet on its round (``_BET_DEAL``); empty without a bet or before the deal."""
    if deal is None:
        return ""
    return dealt_event(deal["bet_type"], deal["cards"], deal["player_cards"], deal["banker_cards"]) or ""


# An entry's bet type and its round's deal, read with the entry in one look-up of its bet.
_BET_DEAL = Subquery(Bet.objects.filter(pk=OuterRef("bet_id")).values(deal=JSONObject(
    bet_type="bet_type", cards="round__cards", player_cards="round__player_cards",
    banker_cards="round__banker_cards"))[:1])


LEDGER_EXPORT = Export(
    name="ledger",
    header=("entry_id", "created_at", "account", "currency", "kind", "amount", "balance_after", "bet_id",
            "round_id", "bet_event", "reason"),
    row=_ledger_row,
    select_related=("account",),
    annotations={"bet_round_id": Subquery(Bet.objects.filter(pk=OuterRef("bet_id")).values("round_id")[:1]),
                 "bet_deal": _BET_DEAL},
)


def _statement_row(entry) -> list:
    return [
        entry.pk, when(entry.created_at), entry.kind, _money(entry.amount), _money(entry.balance_after),
        optional(entry.bet_id), optional(entry.bet_round_id), text(entry.bet_game), text(entry.bet_type),
        _money(entry.bet_stake), optional(entry.bet_multiplier), text(entry.bet_status), _money(entry.bet_payout),
        _bet_event(entry.bet_deal), text(entry.reason),
    ]


def _bet_column(name: str) -> Subquery:
    return Subquery(Bet.objects.filter(pk=OuterRef("bet_id")).values(name)[:1])


# One account's whole history in one file, oldest first: every ledger entry with, for an entry of a
# bet, its round, game, stake, multiplier, status, payout and event on the round (the account's Ledger
# history page, all pages).
ACCOUNT_STATEMENT_EXPORT = Export(
    name="account-statement",
    header=("entry_id", "created_at", "kind", "amount", "balance_after", "bet_id", "round_id", "game", "bet_type",
            "stake", "multiplier", "bet_status", "payout", "bet_event", "reason"),
    row=_statement_row,
    annotations={"bet_round_id": _bet_column("round_id"), "bet_game": _bet_column("round__game__slug"),
                 "bet_type": _bet_column("bet_type"), "bet_stake": _bet_column("stake"),
                 "bet_multiplier": _bet_column("multiplier"), "bet_status": _bet_column("status"),
                 "bet_payout": _bet_column("payout"), "bet_deal": _BET_DEAL},
)
