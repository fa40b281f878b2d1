"""Every row lock the services take, in one place.

The fixed order, from first to last, in which a transaction may take them:

    game instance → RTP policy → rounds (by id) → accounts (by id) → seed pairs (by id)

A seed pair comes last: it is the game's one row that opening a round (its next nonce) and rotating
the seeds change, so whatever else waits for a lock (a deal for its round's bets, a void for its
accounts) must not hold it meanwhile. Dealing and voiding take it only once their rounds are
closed, to decide the reveal of a retired pair: then a rotation that counted those rounds open
left the reveal to them, and one that waited for them counts them closed.

The account locks live with the accounts (wallet.locks); they are named here so that the whole
order reads in one place. Writing an audit event takes no lock (audit.sequencer orders events after
they commit).

A transaction takes a suffix of this order only, so no two transactions wait on each other in a
cycle. Seed pairs (the set-based services take several), rounds and accounts are always locked in
ascending id order for the same reason.

The strength of each lock, as this module and wallet.locks take it:

- game instance, seed pairs: FOR NO KEY UPDATE (lock_game, lock_active_seed_pair(s), lock_seed_pairs).
- RTP policy: FOR NO KEY UPDATE while it changes (lock_rtp_policy); FOR SHARE while a game is
  checked against it (share_rtp_policy), so games of one policy are checked side by side and a
  change of the policy waits for them.
- rounds: whatever ends betting on a round (deal, void: lock_round, lock_rounds) passes its gate
  (below) exclusively, then takes the row FOR NO KEY UPDATE; a bet (OPEN_ROUND_FOR_SHARE,
  share_rounds) passes the gate shared and takes the row FOR SHARE. Settlement claims DEALT rounds
  FOR UPDATE SKIP LOCKED (lock_dealt_rounds), skipping those another worker holds.
- accounts: FOR UPDATE (wallet.locks), or, for a single bet, the row lock of the conditional
  UPDATE that debits it (games/writes.py).

Share locks do not conflict with each other, so bets of different accounts on one round go on side
by side; each conflicts with FOR NO KEY UPDATE, so a deal waits for the bets already holding the
round to commit, and a bet that asks after the deal waits for the deal to commit and then finds the
round no longer OPEN (PostgreSQL re-reads a row whose lock it waited for). A bet is therefore
either committed before the deal reads the round's bets, or refused.

Why NO KEY: no update here changes a key, and a row inserted elsewhere that refers to a locked row
(a round to its game or seed pair, a bet to its round) has its foreign key checked with FOR KEY
SHARE, which FOR NO KEY UPDATE lets through and FOR UPDATE would make wait for the holder (two such
waits can make a deadlock). The two FOR UPDATE locks meet no such check: nothing refers to a round
once it is DEALT (a bet needs it OPEN), and whatever inserts a row referring to an account (a bet,
a ledger entry) changes its balance in the same transaction, so it waits for the account's lock
anyway.
"""

from django.db import DEFAULT_DB_ALIAS, connections

from games.choices import RoundStatus
from games.models import GameInstance, Round, RtpPolicy, SeedPair
from wallet.locks import lock_account_balances, lock_accounts, lock_accounts_by_external_id

__all__ = [
    "lock_game", "lock_rtp_policy", "share_rtp_policy", "lock_active_seed_pair", "lock_active_seed_pairs",
    "lock_seed_pairs", "lock_round", "lock_rounds", "share_rounds",
    "OPEN_ROUND_FOR_SHARE", "lock_dealt_rounds", "lock_accounts", "lock_account_balances",
    "lock_accounts_by_external_id",
]

# Each round also has a gate, a PostgreSQL advisory lock (two-key form: this class and the round's
# id modulo 2^31, so two rounds 2^31 ids apart share a gate and at worst wait for each other). Bets
# pass it shared, deal and void exclusively, before their row lock. Row locks are not queued fairly:
# a share lock is granted beside other share locks even while a FOR NO KEY UPDATE waits, so a steady
# stream of bets could hold a deal off for as long as it lasts; the gate is queued in order, so
# bets that arrive after the deal asked wait behind it (and are then refused).
ROUND_GATE_CLASS = 0x0BAC
_ROUND_GATE = f"{ROUND_GATE_CLASS}, mod(%(round_id)s, 2147483648)::integer"
_ROUND_FOR_SHARE = (
    f"SELECT r.id FROM (SELECT pg_advisory_xact_lock_shared({_ROUND_GATE})) AS gate, "
    f"{Round._meta.db_table} AS r WHERE r.id = %(round_id)s"
)
# A bet's hold on its round: the round's id while it is OPEN, held FOR SHARE past its gate. The
# single bet's write statement begins with it (games/writes.py); parameters %(round_id)s, %(open)s.
OPEN_ROUND_FOR_SHARE = f"{_ROUND_FOR_SHARE} AND r.status = %(open)s FOR SHARE OF r"


def lock_game(game_id: int, using: str = DEFAULT_DB_ALIAS) -> GameInstance:
    return GameInstance.objects.using(using).select_for_update(no_key=True).get(pk=game_id)


def lock_rtp_policy(policy_id: int, using: str = DEFAULT_DB_ALIAS) -> RtpPolicy:
    """Held while the policy is changed and checked against its games."""
    return RtpPolicy.objects.using(using).select_for_update(no_key=True).get(pk=policy_id)


def share_rtp_policy(policy_id: int, using: str = DEFAULT_DB_ALIAS) -> RtpPolicy:
    """Held FOR SHARE while a game is checked against the policy's limits as they stand: games
    checked against one policy go on together, and a change of the policy waits for them."""
    found = list(RtpPolicy.objects.raw(f"SELECT * FROM {RtpPolicy._meta.db_table} WHERE id = %s FOR SHARE",
                                       [policy_id], using=using))
    if not found:
        raise RtpPolicy.DoesNotExist(f"No RTP policy {policy_id}.")
    return found[0]


def lock_active_seed_pair(game_id: int, using: str = DEFAULT_DB_ALIAS) -> SeedPair | None:
    """The game's active pair, locked; None if it was retired while we waited for the lock."""
    return (
        SeedPair.objects.using(using).select_for_update(no_key=True)
        .filter(game_id=game_id, retired_at__isnull=True)
        .first()
    )


def lock_active_seed_pairs(game_ids, using: str = DEFAULT_DB_ALIAS) -> dict:
    """The active pairs of these games, locked in ascending id order: {game id: pair}. A game whose
    pair was retired while we waited for the lock (or that has none) is left out."""
    pairs = (SeedPair.objects.using(using).select_for_update(no_key=True)
             .filter(game_id__in=set(game_ids), retired_at__isnull=True).order_by("pk"))
    return {pair.game_id: pair for pair in pairs}


def lock_seed_pairs(pair_ids, using: str = DEFAULT_DB_ALIAS) -> dict:
    """These pairs, locked in ascending id order, {id: pair}: after their rounds (the fixed order), by
    what has just closed them, so that a retired pair's reveal sees every one of its rounds as it is."""
    return {pair.pk: pair for pair in SeedPair.objects.using(using).select_for_update(no_key=True)
            .filter(pk__in=set(pair_ids)).order_by("pk")}


def lock_round(round_id: int, using: str = DEFAULT_DB_ALIAS) -> Round:
    """The round, its game and seed pair, FOR NO KEY UPDATE past its gate: what ends betting on it takes this."""
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT pg_advisory_xact_lock({_ROUND_GATE})", {"round_id": round_id})
    return (Round.objects.using(using).select_for_update(of=("self",), no_key=True)
            .select_related("game", "seed_pair").get(pk=round_id))


def lock_rounds(round_ids, using: str = DEFAULT_DB_ALIAS) -> list:
    """lock_round for many rounds: past their gates one by one, then FOR NO KEY UPDATE, in ascending
    id order, with their seed pairs read (not locked: lock_seed_pairs comes later)."""
    with connections[using].cursor() as cursor:
        for round_id in sorted(set(round_ids)):
            cursor.execute(f"SELECT pg_advisory_xact_lock({_ROUND_GATE})", {"round_id": round_id})
    return list(Round.objects.using(using).select_for_update(of=("self",), no_key=True).select_related("seed_pair")
                .filter(pk__in=set(round_ids)).order_by("pk"))


def share_rounds(round_ids, using: str = DEFAULT_DB_ALIAS) -> dict:
    """The rounds with their games, held FOR SHARE past their gates (one by one, in ascending id
    order) until the transaction ends (bulk intake, and a single bet off its one statement): {id: round}.

    Round.DoesNotExist when any of them is missing.
    """
    round_ids = sorted(set(round_ids))
    with connections[using].cursor() as cursor:
        for round_id in round_ids:
            cursor.execute(f"{_ROUND_FOR_SHARE} FOR SHARE OF r", {"round_id": round_id})
    rounds = Round.objects.using(using).select_related("game").in_bulk(round_ids)
    if len(rounds) != len(round_ids):
        raise Round.DoesNotExist(f"No round {', '.join(str(i) for i in round_ids if i not in rounds)}.")
    return {round_id: rounds[round_id] for round_id in round_ids}


def lock_dealt_rounds(round_ids, limit: int, max_failures: int, using: str = DEFAULT_DB_ALIAS) -> list:
    """Claim up to ``limit`` DEALT rounds as (id, outcome), FOR UPDATE, skipping those another worker holds.

    Without ``round_ids`` (a sweep), rounds that already failed ``max_failures`` times are left for
    an operator, so one bad round cannot block the others.
    """
    rounds = Round.objects.using(using).filter(status=RoundStatus.DEALT)
    if round_ids is not None:
        rounds = rounds.filter(pk__in=round_ids)
    else:
        rounds = rounds.filter(settlement_failures__lt=max_failures)
    return list(
        rounds.order_by("pk").select_for_update(skip_locked=True).values_list("pk", "outcome")[:limit]
    )
