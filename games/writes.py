"""The write of a new bet: the debit, the bet, its stake entry and its audit event in one statement
on PostgreSQL.

It is wallet.services.ledger_post and audit.services.audit_record fused with the bet's insert, for
the one path where the number of statements is the cost: the round is taken FOR SHARE and
re-checked OPEN (games/locks.py says why), the balance is debited only if it covers the stake, and
the bet, the ledger entry and the event are inserted only if both held, all in one statement, which
is its own transaction: the read before it needs none, since the statement checks again what it
relies on. Elsewhere (the embedded SQLite, whose transactions take the database's write lock when they begin,
so what the caller read still holds) the same work is done by the ORM through ledger_post and
audit_record.
"""

import contextlib

from django.db import connection, transaction

from audit.models import AuditEvent
from audit.services import audit_event_columns, audit_record, audit_written
from games.choices import BetStatus, RoundStatus
from games.locks import OPEN_ROUND_FOR_SHARE
from games.models import Bet
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEntry
from wallet.services import ledger_post

_BET_INSERT = f"""
    WITH open_round AS MATERIALIZED ({OPEN_ROUND_FOR_SHARE}),
    debit AS (
        UPDATE {Account._meta.db_table} SET balance = balance - %(stake)s
        WHERE id = %(account_id)s AND balance >= %(stake)s AND EXISTS (SELECT FROM open_round)
        RETURNING balance
    ),
    bet AS (
        INSERT INTO {Bet._meta.db_table}
            (round_id, account_id, client_id, bet_type, stake, multiplier, idempotency_key, status, placed_at)
        SELECT %(round_id)s, %(account_id)s, %(client_id)s, %(bet_type)s, %(stake)s, %(multiplier)s,
               %(idempotency_key)s, %(pending)s, %(placed_at)s
        FROM debit
        RETURNING id
    ),
    event AS (
        INSERT INTO {AuditEvent._meta.db_table} (created_at, actor_user_id, actor, action, object_type, object_id,
                                                 before, after, reason, request_id, source_ip)
        SELECT %(created_at)s, %(actor_user_id)s, %(actor)s, %(action)s, %(object_type)s, bet.id::text,
               NULL, %(after)s::jsonb, %(reason)s, %(request_id)s, %(source_ip)s
        FROM bet
    )
    INSERT INTO {LedgerEntry._meta.db_table} (account_id, bet_id, kind, amount, balance_after, reason, created_at)
    SELECT %(account_id)s, bet.id, %(kind)s, -%(stake)s, debit.balance, '', %(placed_at)s
    FROM bet, debit
    RETURNING bet_id, balance_after
"""


def bet_transaction():
    """What a bet's read and write run in: on PostgreSQL nothing (the write is one statement), unless
    already inside a transaction, where a savepoint keeps a refused insert from breaking it; elsewhere
    one transaction around both."""
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        return contextlib.nullcontext()
    return transaction.atomic()


def bet_insert(bet: Bet, *, actor, action: str, after: dict) -> bool:
    """Write an unsaved bet (its account loaded, its round read OPEN), debit its stake and record its
    audit event (``actor``, ``action``, ``after``, as audit_record would).

    False, with nothing written, when the round is no longer OPEN or the balance no longer covers
    the stake. A used idempotency key raises IntegrityError (the unique (client, key)).
    """
    if connection.vendor != "postgresql":
        bet.save(force_insert=True)
        ledger_post(account=bet.account, bet_id=bet.pk, kind=LedgerKind.STAKE, amount=-bet.stake)
        audit_record(actor=actor, action=action, obj=bet, after=after)
        return True
    with connection.cursor() as cursor:
        cursor.execute(_BET_INSERT, {
            **audit_event_columns(actor=actor, action=action, after=after), "object_type": Bet._meta.model_name,
            "round_id": bet.round_id, "open": RoundStatus.OPEN, "account_id": bet.account_id,
            "client_id": bet.client_id, "bet_type": bet.bet_type, "stake": bet.stake,
            "multiplier": bet.multiplier, "idempotency_key": bet.idempotency_key,
            "pending": BetStatus.PENDING, "placed_at": bet.placed_at, "kind": LedgerKind.STAKE,
        })
        written = cursor.fetchone()
    if written is None:
        return False
    audit_written()
    bet.pk, bet.account.balance = written
    bet._state.adding, bet._state.db = False, connection.alias  # as if loaded: saving it again updates
    return True
