"""The set-based writes of a settlement batch: one statement each, whatever the number of bets.

On PostgreSQL the rows travel as arrays and are joined with ``unnest``; elsewhere (the embedded
SQLite) Django's bulk operations do the same work in a few statements per thousand rows.

Each array travels as one array literal ('{1,2,3}'), built by ``str.join``: the driver then quotes
one string instead of adapting every element (which cost more than the statements themselves for
batches of ten thousand bets).
"""

import re

from django.db import connection

from games.choices import BetStatus
from games.models import Bet
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry

BULK_BATCH = 1000


class SettlementWriteError(RuntimeError):
    """A write touched fewer rows than the batch holds: someone else changed them. Roll back."""


def _postgres() -> bool:
    return connection.vendor == "postgresql"


# Elements an array literal takes as they are: numbers and words, but not the word NULL.
_ELEMENT = r"(?!(?i:null)(?:,|$))[A-Za-z0-9_.+-]+"
_PLAIN_ELEMENTS = re.compile(rf"(?:{_ELEMENT}(?:,{_ELEMENT})*)?")


def _array(values) -> str:
    """A PostgreSQL array literal of numbers (ints, Decimals) or plain words (statuses, kinds).

    Only elements that need no quoting in an array literal are accepted, so the literal means
    exactly the values given.
    """
    values = list(values)
    text = ",".join(map(str, values))
    if (not _PLAIN_ELEMENTS.fullmatch(text) or text.count(",") != max(len(values) - 1, 0)
            or (values and not text) or any(value is None for value in values)):
        raise ValueError("array elements must be numbers or plain words")
    return "{" + text + "}"


def settle_bets(settled: list, *, settled_at, from_status: str = BetStatus.PENDING) -> None:
    """settled: [(bet id, status, payout)]; only bets still ``from_status`` (PENDING, or HELD for an
    operator's settlement of a held bet) are written."""
    if not settled:
        return
    ids, statuses, payouts = (list(column) for column in zip(*settled, strict=True))
    if _postgres():
        id_array = _array(ids)
        with connection.cursor() as cursor:
            # "b.id = ANY(ids)" as well as the join: without it the planner may merge-join the
            # unnest with the whole primary key index, from the first bet ever placed, so each
            # batch would read every bet (and dead row version) below its own.
            cursor.execute(
                f"""UPDATE {Bet._meta.db_table} AS b
                    SET status = v.status, payout = v.payout, settled_at = %s
                    FROM unnest(%s::bigint[], %s::varchar[], %s::numeric[]) AS v(id, status, payout)
                    WHERE b.id = ANY(%s::bigint[]) AND b.id = v.id AND b.status = %s""",
                [settled_at, id_array, _array(statuses), _array(payouts), id_array, from_status],
            )
            written = cursor.rowcount
    else:
        pending = Bet.objects.filter(pk__in=ids, status=from_status).only("pk")
        bets = {bet.pk: bet for bet in pending}
        for bet_id, status, payout in settled:
            if bet_id in bets:
                bets[bet_id].status, bets[bet_id].payout, bets[bet_id].settled_at = status, payout, settled_at
        written = Bet.objects.bulk_update(bets.values(), ["status", "payout", "settled_at"], batch_size=BULK_BATCH)
    if written != len(settled):
        raise SettlementWriteError(f"{len(settled)} bets to settle, {written} still {from_status.lower()}")


def post_payouts(payouts: list, *, created_at) -> None:
    """payouts: [(account id, bet id, amount, balance after)] as PAYOUT ledger entries."""
    if not payouts:
        return
    if _postgres():
        account_ids, bet_ids, amounts, balances = (list(column) for column in zip(*payouts, strict=True))
        with connection.cursor() as cursor:
            cursor.execute(
                f"""INSERT INTO {LedgerEntry._meta.db_table}
                        (account_id, bet_id, kind, amount, balance_after, reason, created_at)
                    SELECT v.account_id, v.bet_id, %s, v.amount, v.balance_after, '', %s
                    FROM unnest(%s::bigint[], %s::bigint[], %s::numeric[], %s::numeric[])
                        AS v(account_id, bet_id, amount, balance_after)""",
                [LedgerKind.PAYOUT, created_at, _array(account_ids), _array(bet_ids), _array(amounts),
                 _array(balances)],
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
        id_array = _array(balances)
        with connection.cursor() as cursor:
            # "a.id = ANY(ids)" for the same reason as in settle_bets: no scan of the whole index.
            cursor.execute(
                f"""UPDATE {Account._meta.db_table} AS a SET balance = v.balance
                    FROM unnest(%s::bigint[], %s::numeric[]) AS v(id, balance)
                    WHERE a.id = ANY(%s::bigint[]) AND a.id = v.id""",
                [id_array, _array(balances.values()), id_array],
            )
        return
    accounts = [Account(pk=account_id, balance=balance) for account_id, balance in balances.items()]
    Account.objects.bulk_update(accounts, ["balance"], batch_size=BULK_BATCH)
