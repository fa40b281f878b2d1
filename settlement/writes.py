"""The set-based writes of a settlement batch: one statement each, whatever the number of bets.

The rows travel as arrays and are joined with ``unnest`` (wallet.writes builds the array literals
and writes the balances and ledger entries). The bets' one UPDATE is a shortcut around the ORM,
with its off-switch: ``settings.SETTLEMENT_BETS_IN_ONE_STATEMENT`` off, the plain path writes the
same rows with one UPDATE run for every bet (``dbutils.updates.update_rows``), 5 times slower
(2,000 bets: 0.16 s against 0.77 s on a test database); tests/settlement/test_writes.py holds the
two equal.
"""

from contextlib import contextmanager

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from dbutils.plans import custom_plans
from dbutils.updates import update_rows
from games.choices import BetStatus
from games.models import Bet
from wallet.choices import LedgerKind
from wallet.writes import array_literal, insert_ledger_entries, set_balances

__all__ = ["SettlementWriteError", "plans_for_arrays", "post_payouts", "set_balances", "settle_bets"]


class SettlementWriteError(RuntimeError):
    """A write touched fewer rows than the batch holds: someone else changed them. Roll back."""


# From this many bets a batch's statements are planned for their own arrays (see plans_for_arrays).
CUSTOM_PLANS_FROM_BETS = 1000


@contextmanager
def plans_for_arrays(bets: int, using: str = DEFAULT_DB_ALIAS):
    """The block's statements planned for the arrays they carry (dbutils.plans.custom_plans) from
    CUSTOM_PLANS_FROM_BETS bets on: with a generic plan, the bets' update of a 10,000-bet batch
    matched each bet against every other in a nested loop, 4 s instead of 0.2 s. A small batch keeps
    its plans, whose loops are short."""
    if bets < CUSTOM_PLANS_FROM_BETS:
        yield
        return
    with custom_plans(using):
        yield


def settle_bets(settled: list, *, settled_at, from_status: str = BetStatus.PENDING,
                using: str = DEFAULT_DB_ALIAS) -> None:
    """settled: [(bet id, status, payout)]; only bets still ``from_status`` (PENDING, or HELD for an
    operator's settlement of a held bet) are written."""
    if not settled:
        return
    if settings.SETTLEMENT_BETS_IN_ONE_STATEMENT:
        written = _settle_bets_unnest(settled, settled_at=settled_at, from_status=from_status, using=using)
    else:
        written = update_rows(Bet, ["status", "payout", "settled_at"],
                              [(bet_id, status, payout, settled_at) for bet_id, status, payout in settled],
                              where={"status": from_status}, using=using)
    if written != len(settled):
        raise SettlementWriteError(f"{len(settled)} bets to settle, {written} still {from_status.lower()}")


def _settle_bets_unnest(settled: list, *, settled_at, from_status: str, using: str) -> int:
    ids, statuses, payouts = (list(column) for column in zip(*settled, strict=True))
    id_array = array_literal(ids)
    with connections[using].cursor() as cursor:
        # "b.id = ANY(ids)" as well as the join: without it the planner may merge-join the
        # unnest with the whole primary key index, from the first bet ever placed, so each
        # batch would read every bet (and dead row version) below its own. The ids' range too:
        # the planner prunes the bets' monthly partitions outside it at once.
        cursor.execute(
            f"""UPDATE {Bet._meta.db_table} AS b
                SET status = v.status, payout = v.payout, settled_at = %s
                FROM unnest(%s::bigint[], %s::varchar[], %s::numeric[]) AS v(id, status, payout)
                WHERE b.id BETWEEN %s AND %s AND b.id = ANY(%s::bigint[]) AND b.id = v.id AND b.status = %s""",
            [settled_at, id_array, array_literal(statuses), array_literal(payouts), min(ids), max(ids), id_array,
             from_status],
        )
        return cursor.rowcount


def post_payouts(payouts: list, *, created_at, using: str = DEFAULT_DB_ALIAS) -> None:
    """payouts: [(account id, bet id, amount, balance after)] as PAYOUT ledger entries."""
    insert_ledger_entries(payouts, kind=LedgerKind.PAYOUT, created_at=created_at, using=using)
