"""Searches of the big lists as a union of index-backed lookups (``indexed_search``)."""

from django.db.models import Q

# At most this many ids of a small table (games, accounts, users, seed pairs) feed a search.
SEARCH_ID_LIMIT = 1000
# A search arm matching more rows than this is kept as a condition (see indexed_search).
SEARCH_KEYS_CAP = 1000


def matching_ids(queryset, limit: int = SEARCH_ID_LIMIT) -> list:
    """The primary keys of a lookup on a small table (games, accounts, users, seed pairs), read first
    so that the big table is searched on its own indexed foreign key."""
    return list(queryset.order_by().values_list("pk", flat=True)[:limit])


def indexed_search(queryset, arms, cap: int = SEARCH_KEYS_CAP):
    """``queryset`` narrowed to the rows any arm matches, each arm answered by an index.

    An arm is a ``Q`` on the model's own indexed columns (``account_id__in=[ids]``, ``hash=term``),
    or a ``values_list(…, flat=True)`` queryset of primary keys from another table (the rounds an
    account bet on: ``Bet.objects.filter(account_id__in=ids).values_list("round_id", flat=True)``).
    An arm of an empty id list (``__in=[]``) matches nothing.

    Each arm's keys are read first, by its own index, up to ``cap`` of them; the list then asks for
    ``pk IN (those keys)``, which it reads newest first from the primary key. An OR of the arms
    instead would let PostgreSQL walk the primary key from the newest row and test each against
    every arm, hoping for early matches: a read of the whole table for an account that last played
    months ago. An arm with more than ``cap`` rows (a game's rounds, an actor's events) matches
    densely: it is kept as a condition (``pk IN (…)`` or the ``Q``), where that walk stops early.
    """
    keys, wide = set(), []
    for arm in arms:
        if not isinstance(arm, Q):
            arm = arm.using(queryset.db)  # read where the list reads (a replica: backoffice.replica_reads)
        found = list((queryset.model._base_manager.db_manager(queryset.db).filter(arm).values_list("pk", flat=True)
                      if isinstance(arm, Q) else arm).order_by()[: cap + 1])
        if len(found) > cap:
            wide.append(arm if isinstance(arm, Q) else Q(pk__in=arm))
        else:
            keys.update(found)
    if not keys and not wide:
        return queryset.none()
    condition = Q(pk__in=sorted(keys)) if keys else Q()
    for arm in wide:
        condition |= arm
    return queryset.filter(condition)
