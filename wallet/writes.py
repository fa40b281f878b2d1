"""The set-based money writes: the balances of many accounts, and many ledger entries, in one
statement each, whatever their number. Settlement and bulk bets use them.

The rows travel as arrays and are joined with ``unnest``: a shortcut around the ORM, with its
off-switch, ``settings.BULK_WRITES_IN_ONE_STATEMENT``. Off, the plain path writes the same rows
with Django's bulk_create and one UPDATE run for every balance (``dbutils.updates.update_rows``);
tests/games/test_bet_paths.py holds the two equal.

Each array travels as one array literal ('{1,2,3}'), built by ``str.join``: the driver then quotes
one string instead of adapting every element (which cost more than the statements themselves for
batches of ten thousand rows).
"""

import re

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from dbutils.updates import update_rows
from wallet.models import Account, LedgerEffect, LedgerEntry

BULK_BATCH = 1000

# Elements an array literal takes as they are: numbers and words, but not the word NULL.
_ELEMENT = r"(?!(?i:null)(?:,|$))[A-Za-z0-9_.+-]+"
_PLAIN_ELEMENTS = re.compile(rf"(?:{_ELEMENT}(?:,{_ELEMENT})*)?")


def array_literal(values) -> str:
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


def insert_ledger_entries(entries: list, *, kind: str, created_at, using: str = DEFAULT_DB_ALIAS) -> None:
    """entries: [(account id, bet id, amount, balance after)], all of one ``kind`` and no reason,
    each with its bet's effect (LedgerEffect) in the same statement: a bet's second effect of the
    kind raises IntegrityError."""
    if not entries:
        return
    if settings.BULK_WRITES_IN_ONE_STATEMENT:
        account_ids, bet_ids, amounts, balances = (list(column) for column in zip(*entries, strict=True))
        with connections[using].cursor() as cursor:
            cursor.execute(
                f"""WITH entry AS (
                        INSERT INTO {LedgerEntry._meta.db_table}
                            (account_id, bet_id, kind, amount, balance_after, reason, created_at)
                        SELECT v.account_id, v.bet_id, %(kind)s, v.amount, v.balance_after, '', %(created_at)s
                        FROM unnest(%(accounts)s::bigint[], %(bets)s::bigint[], %(amounts)s::numeric[],
                                    %(balances)s::numeric[]) AS v(account_id, bet_id, amount, balance_after)
                        RETURNING bet_id
                    )
                    INSERT INTO {LedgerEffect._meta.db_table} (bet_id, kind) SELECT bet_id, %(kind)s FROM entry""",
                {"kind": kind, "created_at": created_at, "accounts": array_literal(account_ids),
                 "bets": array_literal(bet_ids), "amounts": array_literal(amounts),
                 "balances": array_literal(balances)},
            )
        return
    LedgerEntry.objects.using(using).bulk_create(
        [LedgerEntry(account_id=account_id, bet_id=bet_id, kind=kind, amount=amount, balance_after=balance,
                     created_at=created_at)
         for account_id, bet_id, amount, balance in entries],
        batch_size=BULK_BATCH,
    )
    LedgerEffect.objects.using(using).bulk_create(
        [LedgerEffect(bet_id=bet_id, kind=kind) for _account, bet_id, _amount, _balance in entries],
        batch_size=BULK_BATCH,
    )


def set_balances(balances: dict, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """balances: {account id: new balance} for accounts this transaction holds locked."""
    if not balances:
        return
    if settings.BULK_WRITES_IN_ONE_STATEMENT:
        id_array = array_literal(balances)
        with connections[using].cursor() as cursor:
            # "a.id = ANY(ids)" as well as the join: without it the planner may merge-join the
            # unnest with the whole primary key index, so each write would read every account.
            cursor.execute(
                f"""UPDATE {Account._meta.db_table} AS a SET balance = v.balance
                    FROM unnest(%s::bigint[], %s::numeric[]) AS v(id, balance)
                    WHERE a.id = ANY(%s::bigint[]) AND a.id = v.id""",
                [id_array, array_literal(balances.values()), id_array],
            )
        return
    update_rows(Account, ["balance"], balances.items(), using=using)
