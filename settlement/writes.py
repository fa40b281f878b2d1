"""The set-based writes of a settlement batch: one statement each, whatever the number of bets.

On PostgreSQL the rows travel as arrays and are joined with ``unnest`` (wallet.writes builds the
array literals and writes the balances and ledger entries); elsewhere (the embedded SQLite)
Django's bulk operations do the same work in a few statements per thousand rows.
"""

from django.db import connection

from dbutils.updates import update_rows
from games.choices import BetStatus
from games.models import Bet
from wallet.choices import LedgerKind
from wallet.writes import array_literal, insert_ledger_entries, postgres, set_balances

__all__ = ["SettlementWriteError", "post_payouts", "set_balances", "settle_bets"]


class SettlementWriteError(RuntimeError):
    """A write touched fewer rows than the batch holds: someone else changed them. Roll back."""


def settle_bets(settled: list, *, settled_at, from_status: str = BetStatus.PENDING) -> None:
    """settled: [(bet id, status, payout)]; only bets still ``from_status`` (PENDING, or HELD for an
    operator's settlement of a held bet) are written."""
    if not settled:
        return
    ids, statuses, payouts = (list(column) for column in zip(*settled, strict=True))
    if postgres():
        id_array = array_literal(ids)
        with connection.cursor() as cursor:
            # "b.id = ANY(ids)" as well as the join: without it the planner may merge-join the
            # unnest with the whole primary key index, from the first bet ever placed, so each
            # batch would read every bet (and dead row version) below its own.
            cursor.execute(
                f"""UPDATE {Bet._meta.db_table} AS b
                    SET status = v.status, payout = v.payout, settled_at = %s
                    FROM unnest(%s::bigint[], %s::varchar[], %s::numeric[]) AS v(id, status, payout)
                    WHERE b.id = ANY(%s::bigint[]) AND b.id = v.id AND b.status = %s""",
                [settled_at, id_array, array_literal(statuses), array_literal(payouts), id_array, from_status],
            )
            written = cursor.rowcount
    else:
        written = update_rows(Bet, ["status", "payout", "settled_at"],
                              [(bet_id, status, payout, settled_at) for bet_id, status, payout in settled],
                              where={"status": from_status})
    if written != len(settled):
        raise SettlementWriteError(f"{len(settled)} bets to settle, {written} still {from_status.lower()}")


def post_payouts(payouts: list, *, created_at) -> None:
    """payouts: [(account id, bet id, amount, balance after)] as PAYOUT ledger entries."""
    insert_ledger_entries(payouts, kind=LedgerKind.PAYOUT, created_at=created_at)
