"""Every row lock the services take, in one place.

The fixed order, from first to last, in which a transaction may take them:

    game instance → seed pair → rounds (by id) → accounts (by id) → the audit chain

A transaction takes a suffix of this order only, so no two transactions wait on each other in a
cycle. Rounds and accounts are always locked in ascending id order for the same reason.
On SQLite (the embedded default) ``select_for_update`` is a no-op and writes are serialised by the
database itself.
"""

from django.db import connection
from django.db.models import QuerySet

from games.choices import RoundStatus
from games.models import GameInstance, Round, SeedPair


def lock_game(game_id: int) -> GameInstance:
    return GameInstance.objects.select_for_update().get(pk=game_id)


def lock_active_seed_pair(game_id: int) -> SeedPair | None:
    """The game's active pair, locked; None if it was revealed while we waited for the lock."""
    return (
        SeedPair.objects.select_for_update()
        .filter(game_id=game_id, revealed_at__isnull=True)
        .first()
    )


def lock_round(round_id: int) -> Round:
    return Round.objects.select_for_update(of=("self",)).select_related("game", "seed_pair").get(pk=round_id)


def lock_dealt_rounds(round_ids, limit: int, max_failures: int) -> list:
    """Claim up to ``limit`` DEALT rounds as (id, outcome), skipping those another worker holds.

    Without ``round_ids`` (a sweep), rounds that already failed ``max_failures`` times are left for
    an operator, so one bad round cannot block the others.
    """
    rounds = Round.objects.filter(status=RoundStatus.DEALT)
    if round_ids is not None:
        rounds = rounds.filter(pk__in=round_ids)
    else:
        rounds = rounds.filter(settlement_failures__lt=max_failures)
    return list(
        rounds.order_by("pk").select_for_update(skip_locked=True).values_list("pk", "outcome")[:limit]
    )


def lock_accounts(account_ids) -> dict:
    from settlement.models import Account

    accounts: QuerySet = Account.objects.select_for_update().filter(pk__in=set(account_ids)).order_by("pk")
    return {account.pk: account for account in accounts}


def lock_account_balances(account_ids) -> dict:
    """Lock accounts (by id, ascending) and return {id: balance}."""
    from settlement.models import Account

    rows = Account.objects.select_for_update().filter(pk__in=set(account_ids)).order_by("pk")
    return dict(rows.values_list("pk", "balance"))


# An arbitrary constant naming the audit chain's advisory lock.
AUDIT_CHAIN_LOCK_KEY = 0x0BACCA7A


def lock_audit_chain() -> None:
    """Serialise appends to the audit hash chain until this transaction ends.

    PostgreSQL: a transaction-level advisory lock. SQLite: transactions begin IMMEDIATE (see
    settings), so the writer already holds the database's write lock.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [AUDIT_CHAIN_LOCK_KEY])
