"""Every row lock the services take, in one place.

The fixed order, from first to last, in which a transaction may take them:

    game instance → seed pair → rounds (by id) → accounts (by id) → the audit chain

The account locks live with the accounts (wallet.locks) and the chain's with the audit trail
(audit.services); they are named here so that the whole order reads in one place.

A transaction takes a suffix of this order only, so no two transactions wait on each other in a
cycle. Rounds and accounts are always locked in ascending id order for the same reason.

A round is locked in one of two strengths. Whatever ends betting on it (deal, void) takes it
FOR UPDATE; a bet takes it FOR SHARE and reads it OPEN under that lock. Share locks do not conflict
with each other, so bets of different accounts on one round go on side by side; each conflicts with
FOR UPDATE, so a deal waits for the bets already holding the round to commit, and a bet that asks
after the deal waits for the deal to commit and then finds the round no longer OPEN (PostgreSQL
re-reads a row whose lock it waited for). A bet is therefore either committed before the deal
reads the round's bets, or refused. The money side is the account's row: a bet's debit is a
conditional UPDATE of that row (games/writes.py), bulk intake locks its accounts FOR UPDATE.
The audit chain's lock is the audit trail's own (audit.services) and is the last one taken.
On SQLite (the embedded default) ``select_for_update`` is a no-op and writes are serialised by the
database itself.
"""

from django.db import connection

from games.choices import RoundStatus
from games.models import GameInstance, Round, SeedPair
from wallet.locks import lock_account_balances, lock_accounts, lock_accounts_by_external_id

__all__ = [
    "lock_game", "lock_active_seed_pair", "lock_round", "share_round", "OPEN_ROUND_FOR_SHARE",
    "lock_dealt_rounds", "lock_accounts", "lock_account_balances", "lock_accounts_by_external_id",
]

# A bet's hold on its round (PostgreSQL): the round's id while it is OPEN, held FOR SHARE. The
# single bet's write statement begins with it (games/writes.py); parameters %(round_id)s, %(open)s.
OPEN_ROUND_FOR_SHARE = (
    f"SELECT id FROM {Round._meta.db_table} WHERE id = %(round_id)s AND status = %(open)s FOR SHARE"
)


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


def share_round(round_id: int) -> Round:
    """The round with its game, held FOR SHARE until the transaction ends (bulk intake).

    Round.DoesNotExist when there is none. On SQLite the transaction already holds the database's
    write lock.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM {Round._meta.db_table} WHERE id = %s FOR SHARE", [round_id])
    return Round.objects.select_related("game").get(pk=round_id)


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
