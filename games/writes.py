"""The write of a new bet: the checks, the debit, the bet, its idempotency key (BetKey), its stake
entry with its effect (LedgerEffect) and its audit event in one statement, which is its own
transaction.

It is games.services' checks (``_refusal``), wallet.services.ledger_post and
audit.services.audit_record fused with the bet's insert, for the one path where the number of
statements is the cost. The statement reads the round, its game and the account, and writes only
if the game takes bets, the stake is within its limits and has no more places than its currency
(the currencies with fewer places than the stake travel with it: core.currencies.coarser_than),
the account exists in the game's currency, the round is still OPEN once taken FOR SHARE past its
gate (games/locks.py says why) and the balance covers the stake. A refusal answers no row, and the
caller reads again to say why with the Python checks (games.services._refusal).

A shortcut around the ORM, with its off-switch: ``settings.BET_IN_ONE_STATEMENT`` off, the caller
holds the round FOR SHARE past its gate and the account FOR UPDATE in one transaction, checks in
Python and writes with ``bet_insert`` (the plain path). tests/games/test_bet_checks.py holds the
statement to the Python checks, and tests/games/test_bet_paths.py the two paths to the same rows.
"""

import contextlib
import functools

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from audit.models import AuditEvent
from audit.services import audit_event_columns, audit_record, audit_written
from core.currencies import coarser_than, places_in
from games.choices import BetStatus, GameStatus, RoundStatus
from games.locks import OPEN_ROUND_FOR_SHARE
from games.models import Bet, BetKey, GameInstance, Round
from wallet.choices import LedgerKind
from wallet.models import Account, LedgerEffect, LedgerEntry
from wallet.services import ledger_post
from wallet.writes import BULK_BATCH, array_literal

# The bet's terms as GameInstance.terms gives them, in SQL: a main bet's multiplier (NULL for a
# side bet), and a side bet's paytable (NULL for a main bet or one the game does not offer).
_MULTIPLIER = " ".join(f"WHEN '{bet_type}' THEN g.{GameInstance._meta.get_field(field).column}"
                       for bet_type, field in GameInstance.MULTIPLIER_FIELDS.items())
_SIDE_BETS = f"g.{GameInstance._meta.get_field('side_bets').column}"

_BET_PLACE = f"""
    WITH terms (game_id, game_slug, game_status, min_bet, max_bet, currency, main_multiplier, paytable, account_id,
                account_currency) AS MATERIALIZED (
        SELECT g.id, g.slug, g.status, g.min_bet, g.max_bet, g.currency,
               CASE %(bet_type)s {_MULTIPLIER} END, {_SIDE_BETS} -> %(bet_type)s, a.id, a.currency
        FROM {Round._meta.db_table} r JOIN {GameInstance._meta.db_table} g ON g.id = r.game_id
             LEFT JOIN {Account._meta.db_table} a ON a.external_id = %(account)s
        WHERE r.id = %(round_id)s
    ),
    facts AS MATERIALIZED (
        SELECT terms.*, COALESCE(main_multiplier, (SELECT max(value::numeric) FROM jsonb_each_text(paytable)))
                        AS multiplier
        FROM terms
    ),
    allowed AS MATERIALIZED (
        SELECT account_id, multiplier, paytable FROM facts
        WHERE multiplier IS NOT NULL AND game_status = %(active)s AND %(stake)s BETWEEN min_bet AND max_bet
          AND account_currency = currency
          AND currency <> ALL(%(coarser_currencies)s::varchar[])
          AND EXISTS (SELECT FROM ({OPEN_ROUND_FOR_SHARE}) AS open_round)
    ),
    debit AS (
        UPDATE {Account._meta.db_table} SET balance = balance - %(stake)s
        WHERE id = (SELECT account_id FROM allowed) AND balance >= %(stake)s
        RETURNING balance
    ),
    bet AS (
        INSERT INTO {Bet._meta.db_table}
            (round_id, account_id, client_id, bet_type, stake, multiplier, paytable, idempotency_key, status,
             placed_at)
        SELECT %(round_id)s, allowed.account_id, %(client_id)s, %(bet_type)s, %(stake)s, allowed.multiplier,
               allowed.paytable, %(idempotency_key)s, %(pending)s, %(placed_at)s
        FROM debit, allowed
        RETURNING id
    ),
    key AS (
        INSERT INTO {BetKey._meta.db_table} (client_id, idempotency_key, bet_id)
        SELECT %(client_id)s, %(idempotency_key)s, bet.id FROM bet
    ),
    event AS (
        INSERT INTO {AuditEvent._meta.db_table} (created_at, actor_user_id, actor, action, object_type, object_id,
                                                 before, after, reason, request_id, source_ip)
        SELECT %(created_at)s, %(actor_user_id)s, %(actor)s, %(action)s, %(object_type)s, bet.id::text, NULL,
               %(after)s::jsonb || jsonb_build_object('multiplier', allowed.multiplier::text)
               || CASE WHEN allowed.paytable IS NULL THEN '{{}}'
                       ELSE jsonb_build_object('paytable', allowed.paytable) END,
               %(reason)s, %(request_id)s, %(source_ip)s
        FROM bet, allowed
    ),
    entry AS (
        INSERT INTO {LedgerEntry._meta.db_table} (account_id, bet_id, kind, amount, balance_after, reason, created_at)
        SELECT allowed.account_id, bet.id, %(kind)s, -%(stake)s, debit.balance, '', %(placed_at)s
        FROM bet, debit, allowed
        RETURNING bet_id, balance_after
    ),
    effect AS (
        INSERT INTO {LedgerEffect._meta.db_table} (bet_id, kind) SELECT bet.id, %(kind)s FROM bet
    )
    SELECT facts.game_id, facts.game_slug, facts.multiplier, facts.paytable, facts.account_id,
           facts.account_currency, entry.bet_id, entry.balance_after
    FROM facts, entry
"""


@functools.lru_cache(maxsize=64)
def _codes_literal(codes: tuple) -> str:
    """The currency codes as an array literal, built once per set (a bet's cost is its statement)."""
    return array_literal(codes)


_BET_COLUMNS = [field.attname for field in Bet._meta.concrete_fields]
_BET_RELATIONS = [Bet._meta.get_field(name) for name in ("round", "account", "client")]
_ROUND_GAME = Round._meta.get_field("game")
_PAYTABLE = Bet._meta.get_field("paytable")


def checks_in_statement() -> bool:
    """Whether a bet's checks and writes are one statement (bet_place_checked), or the caller locks,
    reads and checks first and then writes with bet_insert (settings.BET_IN_ONE_STATEMENT off)."""
    return settings.BET_IN_ONE_STATEMENT


def bet_transaction(using: str = DEFAULT_DB_ALIAS):
    """What a bet runs in: nothing for its one statement, unless already inside a transaction, where
    a savepoint keeps a refused insert from breaking it; off that shortcut, one transaction around
    the locks, the reads, the checks and the writes."""
    if checks_in_statement() and not connections[using].in_atomic_block:
        return contextlib.nullcontext()
    return transaction.atomic(using=using)


def bet_place_checked(*, round_id: int, account_external_id: str, bet_type: str, stake, idempotency_key: str,
                      client, placed_at, action: str, after: dict, using: str = DEFAULT_DB_ALIAS) -> Bet | None:
    """Place the bet if every check passes, in one statement on the database ``using``; the new bet
    (its round, game and account loaded with what the statement read), or None, with nothing
    written, when a check failed or there is no such round (the statement answers no row): the
    caller then reads again to say why. ``after`` is the event's content but for the multiplier,
    which the statement reads from the game. A used idempotency key raises IntegrityError (the
    primary key of BetKey, which the statement writes too).
    """
    with connections[using].cursor() as cursor:
        cursor.execute(_BET_PLACE, {
            **audit_event_columns(actor=client, action=action, after=after), "object_type": Bet._meta.model_name,
            "round_id": round_id, "account": account_external_id, "bet_type": bet_type, "stake": stake,
            "coarser_currencies": _codes_literal(coarser_than(places_in(stake))),
            "idempotency_key": idempotency_key, "client_id": client.pk, "placed_at": placed_at,
            "open": RoundStatus.OPEN, "active": GameStatus.ACTIVE, "pending": BetStatus.PENDING,
            "kind": LedgerKind.STAKE,
        })
        row = cursor.fetchone()
    if row is None:
        return None
    audit_written(using)
    game_id, game_slug, multiplier, paytable, account_id, currency, bet_id, balance = row
    # Loaded as the ORM loads rows (each model's fields in its order; those not read are deferred),
    # and related as select_related relates them: the model constructor's keyword path and the
    # relation descriptors' checks cost more than the statement's own Python.
    game = GameInstance.from_db(using, ["id", "slug"], [game_id, game_slug])
    round_ = Round.from_db(using, ["id", "game_id", "status"], [round_id, game_id, RoundStatus.OPEN])  # as it bet
    account = Account.from_db(using, ["id", "external_id", "currency", "balance"],
                              [account_id, account_external_id, currency, balance])
    values = {"id": bet_id, "round_id": round_id, "account_id": account_id, "client_id": client.pk,
              "bet_type": bet_type, "stake": stake, "multiplier": multiplier,
              "paytable": _PAYTABLE.from_db_value(paytable, None, connections[using]),  # JSON text, as Django reads it
              "idempotency_key": idempotency_key,
              "status": BetStatus.PENDING, "payout": None, "placed_at": placed_at, "settled_at": None,
              "hold_reason": "", "held_at": None}
    bet = Bet.from_db(using, _BET_COLUMNS, [values[name] for name in _BET_COLUMNS])
    _ROUND_GAME.set_cached_value(round_, game)
    for field, related in zip(_BET_RELATIONS, (round_, account, client), strict=True):
        field.set_cached_value(bet, related)
    return bet


def bet_insert(bet: Bet, *, actor, action: str, after: dict) -> None:
    """Where the caller has locked, read and checked (the plain path): write an unsaved bet (its
    account loaded and locked), debit its stake and record its audit event, inside the caller's
    transaction."""
    bet.save(force_insert=True)
    BetKey.objects.create(client_id=bet.client_id, idempotency_key=bet.idempotency_key, bet_id=bet.pk)
    ledger_post(account=bet.account, bet_id=bet.pk, kind=LedgerKind.STAKE, amount=-bet.stake)
    audit_record(actor=actor, action=action, obj=bet, after=after)


def bet_keys_insert(bets: list, using: str = DEFAULT_DB_ALIAS) -> None:
    """The idempotency keys (BetKey) of bets just inserted in this transaction (bulk bets), in the
    order of their keys, as every bulk request writes its own: two requests holding the same keys then
    meet at the first of them, and never each wait at the primary key for one the other holds (a
    deadlock). A used key raises IntegrityError.

    Set-based, one statement reading the keys from the bets (only their ids travel); off
    ``settings.BULK_WRITES_IN_ONE_STATEMENT``, the ORM's bulk_create of the same rows.
    """
    if not bets:
        return
    if settings.BULK_WRITES_IN_ONE_STATEMENT:
        with connections[using].cursor() as cursor:
            cursor.execute(
                f"""INSERT INTO {BetKey._meta.db_table} (client_id, idempotency_key, bet_id)
                    SELECT client_id, idempotency_key, id FROM {Bet._meta.db_table}
                    WHERE id = ANY(%s::bigint[]) ORDER BY idempotency_key COLLATE "C" """,
                [array_literal(bet.pk for bet in bets)],
            )
        return
    BetKey.objects.using(using).bulk_create(
        [BetKey(client_id=bet.client_id, idempotency_key=bet.idempotency_key, bet_id=bet.pk)
         for bet in sorted(bets, key=lambda bet: bet.idempotency_key)],
        batch_size=BULK_BATCH,
    )
