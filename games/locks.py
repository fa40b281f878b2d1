"""Every row lock the services take, in one place.

The fixed order, from first to last, in which a transaction may take them:

    game instance → seed pair → rounds (by id) → accounts (by id) → the audit chain

The account locks live with the accounts (wallet.locks) and the chain's with the audit trail
(audit.services); they are named here so that the whole order reads in one place.

A transaction takes a suffix of this order only, so no two transactions wait on each other in a
cycle. Rounds and accounts are always locked in ascending id order for the same reason.

Games, seed pairs and rounds are locked FOR NO KEY UPDATE (no update here changes a key): a row
inserted elsewhere that refers to a locked row (a round to its game, a pair to its game) has its
foreign key checked at commit, after that transaction took the audit chain's lock; FOR UPDATE
would make that check wait for the holder, which itself waits for the chain: a deadlock.
On SQLite (the embedded default) ``select_for_update`` is a no-op and writes are serialised by the
database itself.
"""

from games.choices import RoundStatus
from games.models import GameInstance, Round, SeedPair
from wallet.locks import lock_account_balances, lock_accounts

__all__ = [
    "lock_game", "lock_active_seed_pair", "lock_seed_pair_of_round", "lock_round", "lock_dealt_rounds", "lock_accounts",
    "lock_account_balances",
]


def lock_game(game_id: int) -> GameInstance:
    return GameInstance.objects.select_for_update(no_key=True).get(pk=game_id)


def lock_active_seed_pair(game_id: int) -> SeedPair | None:
    """The game's active pair, locked; None if it was retired while we waited for the lock."""
    return (
        SeedPair.objects.select_for_update(no_key=True)
        .filter(game_id=game_id, retired_at__isnull=True)
        .first()
    )


def lock_seed_pair_of_round(round_id: int) -> SeedPair:
    """The pair of a round, locked before the round itself (the fixed order): dealing and voiding
    hold it so that a retired pair's reveal sees every one of its rounds closed, and so that a
    rotation sees the open rounds as they are."""
    pair_id = Round.objects.filter(pk=round_id).values_list("seed_pair_id", flat=True).get()
    return SeedPair.objects.select_for_update(no_key=True).get(pk=pair_id)


def lock_round(round_id: int) -> Round:
    return (Round.objects.select_for_update(of=("self",), no_key=True).select_related("game", "seed_pair")
            .get(pk=round_id))


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
