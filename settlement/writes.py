"""The set-based writes of a settlement batch: one statement each, whatever the number of bets.

On PostgreSQL the rows travel as arrays and are joined with ``unnest``; elsewhere (the embedded
SQLite) Django's bulk operations do the same work in a few statements per thousand rows.
"""

from django.db import connection

from games.choices import BetStatus
from games.models import Bet
from settlement.choices import LedgerKind
from settlement.models import Account, LedgerEntry

BULK_BATCH = 1000


class SettlementWriteError(RuntimeError):
    """A write touched fewer rows than the batch holds: someone else changed them. Roll back."""


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def settle_bets(settled: list, *, settled_at) -> None:
    """settled: [(bet id, status, payout)]; only bets still PENDING are written."""
    if not settled:
        return
    ids, statuses, payouts = (list(column) for column in zip(*settled))
    if _postgres():
        with connection.cursor() as cursor:
            cursor.execute(
                f"""UPDATE {Bet._meta.db_table} AS b
                    SET status = v.status, payout = v.payout, settled_at = %s
                    FROM unnest(%s::bigint[], %s::varchar[], %s::numeric[]) AS v(id, status, payout)
                    WHERE b.id = v.id AND b.status = %s""",
                [settled_at, ids, statuses, payouts, BetStatus.PENDING],
            )
            written = cursor.rowcount
    else:
        pending = Bet.objects.filter(pk__in=ids, status=BetStatus.PENDING).only("pk")
        bets = {bet.pk: bet for bet in pending}
        for bet_id, status, payout in settled:
            if bet_id in bets:
                bets[bet_id].status, bets[bet_id].payout, bets[bet_id].settled_at = status, payout, settled_at
        written = Bet.objects.bulk_update(bets.values(), ["status", "payout", "settled_at"], batch_size=BULK_BATCH)
    if written != len(settled):
        raise SettlementWriteError(f"{len(settled)} bets to settle, {written} still pending")


def post_payouts(payouts: list, *, created_at) -> None:
    """payouts: [(account id, bet id, amount, balance after)] as PAYOUT ledger entries."""
    if not payouts:
        return
    if _postgres():
        account_ids, bet_ids, amounts, balances = (list(column) for column in zip(*payouts))
        with connection.cursor() as cursor:
            cursor.execute(
                f"""INSERT INTO {LedgerEntry._meta.db_table}
                        (account_id, bet_id, kind, amount, balance_after, reason, created_at)
                    SELECT v.account_id, v.bet_id, %s, v.amount, v.balance_after, '', %s
                    FROM unnest(%s::bigint[], %s::bigint[], %s::numeric[], %s::numeric[])
                        AS v(account_id, bet_id, amount, balance_after)""",
                [LedgerKind.PAYOUT, created_at, account_ids, bet_ids, amounts, balances],
            )
        return
    LedgerEntry.objects.bulk_create(
        [LedgerEntry(account_id=account_id, bet_id=bet_id, kind=LedgerKind.PAYOUT, amount=amount,
                     balance_after=balance, created_at=created_at)
         for account_id, bet_id, amount, balance in payouts],
        batch_size=BULK_BATCH,
    )


def set_balances(balances: dict) -> None:
    """balances: {account id: new balance} for accounts this transaction holds locked."""
    if not balances:
        return
    if _postgres():
        with connection.cursor() as cursor:
            cursor.execute(
                f"""UPDATE {Account._meta.db_table} AS a SET balance = v.balance
                    FROM unnest(%s::bigint[], %s::numeric[]) AS v(id, balance) WHERE a.id = v.id""",
                [list(balances), list(balances.values())],
            )
        return
    accounts = [Account(pk=account_id, balance=balance) for account_id, balance in balances.items()]
    Account.objects.bulk_update(accounts, ["balance"], batch_size=BULK_BATCH)
