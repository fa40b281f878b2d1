"""CSV exports for regulators: rounds, bets, ledger entries and audit events, streamed.

``csv_response`` is the one streaming helper: it writes rows with ``csv.writer`` onto a buffer that
keeps nothing (``Echo``) and reads the queryset with ``iterator(chunk_size=...)``, so an export of
millions of rows never holds more than one chunk in memory. Each ``*_EXPORT`` names the columns and
builds a row from one object; the admin hands them the queryset of the changelist being viewed.

A seed pair's server seed appears only through ``SeedPair.revealed_server_seed``: empty until the
pair is revealed, never the raw field.

Free text that a person typed (reasons, ids chosen by operators or clients) is written so that a
spreadsheet never runs it as a formula: a leading ``=``, ``+``, ``-``, ``@``, tab or carriage
return gets a ``'`` in front (OWASP's advice). Amounts are numbers and are written as they are.
"""

import csv
import json
from dataclasses import dataclass
from datetime import datetime, timezone as dt_timezone
from typing import Callable, Iterable

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone

CHUNK_SIZE = 2000
# Rows are sent in pieces of about this many characters rather than one line at a time.
FLUSH_CHARS = 64 * 1024
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


class Echo:
    """A file-like object whose write returns what it was given (csv.writer's output, unbuffered)."""

    def write(self, value):
        return value


def text(value) -> str:
    """Typed text, made safe to open in a spreadsheet."""
    value = "" if value is None else str(value)
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value


def when(value: datetime | None) -> str:
    return value.astimezone(dt_timezone.utc).isoformat() if value else ""


def cards(labels) -> str:
    return " ".join(labels or ())


def boolean(value) -> str:
    return "" if value is None else ("true" if value else "false")


def optional(value) -> str:
    return "" if value is None else str(value)


def as_json(value) -> str:
    if value is None:
        return ""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Export:
    name: str
    header: tuple
    row: Callable
    select_related: tuple = ()

    def rows(self, queryset: QuerySet) -> Iterable[list]:
        if self.select_related:
            queryset = queryset.select_related(*self.select_related)
        for obj in queryset.iterator(chunk_size=CHUNK_SIZE):
            yield self.row(obj)


def csv_response(export: Export, queryset: QuerySet, filename: str | None = None) -> StreamingHttpResponse:
    """Stream ``queryset`` as CSV, chunk by chunk; nothing is read before the client starts reading."""
    writer = csv.writer(Echo())

    def generate():
        yield writer.writerow(export.header)
        pending, size = [], 0
        for row in export.rows(queryset):
            line = writer.writerow(row)
            pending.append(line)
            size += len(line)
            if size >= FLUSH_CHARS:
                yield "".join(pending)
                pending, size = [], 0
        if pending:
            yield "".join(pending)

    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response = StreamingHttpResponse(generate(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename or f"{export.name}-{stamp}.csv"}"'
    response["Cache-Control"] = "no-store"
    return response


# --- Row builders ---------------------------------------------------------------------------------

def _round_row(round_) -> list:
    pair = round_.seed_pair
    return [
        round_.pk, round_.game.slug, round_.status, when(round_.opened_at), when(round_.dealt_at),
        when(round_.settled_at), when(round_.voided_at), text(round_.void_reason),
        pair.pk, pair.server_seed_hash, text(pair.client_seed), round_.nonce, round_.decks,
        cards(round_.cards), cards(round_.player_cards), optional(round_.player_score),
        cards(round_.banker_cards), optional(round_.banker_score), boolean(round_.natural),
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
        text(bet.client.get_username()), bet.bet_type, bet.stake, bet.multiplier, bet.status, optional(bet.payout),
        text(bet.idempotency_key), when(bet.placed_at), when(bet.settled_at), bet.round.status,
        bet.round.outcome or "",
    ]


BETS_EXPORT = Export(
    name="bets",
    header=("bet_id", "round_id", "game", "account", "currency", "client", "bet_type", "stake", "multiplier",
            "status", "payout", "idempotency_key", "placed_at", "settled_at", "round_status", "round_outcome"),
    row=_bet_row,
    select_related=("round__game", "account", "client"),
)


def _ledger_row(entry) -> list:
    return [
        entry.pk, when(entry.created_at), text(entry.account.external_id), entry.account.currency, entry.kind,
        entry.amount, entry.balance_after, optional(entry.bet_id), optional(entry.bet.round_id if entry.bet_id else None),
        text(entry.reason),
    ]


LEDGER_EXPORT = Export(
    name="ledger",
    header=("entry_id", "created_at", "account", "currency", "kind", "amount", "balance_after", "bet_id",
            "round_id", "reason"),
    row=_ledger_row,
    select_related=("account", "bet"),
)


def _audit_row(event) -> list:
    return [
        event.pk, when(event.created_at), text(event.actor), optional(event.actor_user_id), event.action,
        event.object_type, text(event.object_id), text(event.reason), as_json(event.before), as_json(event.after),
        text(event.request_id), event.source_ip or "", event.prev_hash, event.hash,
    ]


AUDIT_EXPORT = Export(
    name="audit-events",
    header=("event_id", "created_at", "actor", "actor_user_id", "action", "object_type", "object_id", "reason",
            "before", "after", "request_id", "source_ip", "prev_hash", "hash"),
    row=_audit_row,
)
