"""Reads: the queries the API (and anything else that shows data) uses. Writes live in services.

Selectors return model instances or querysets with what their callers need already joined, so a
page of results costs a fixed number of queries. None of them counts a whole table.

The server seed of a pair leaves this module only through ``SeedPair.revealed_server_seed``
(None until the pair is revealed).

Each selector that queries takes ``using``, the database alias it reads from (the default
database unless told). Those given model instances and reading only their relations (``game_odds``,
``round_verification``) read from the database the instances came from.
"""

import functools
from dataclasses import dataclass
from datetime import MAXYEAR, UTC, datetime, timedelta

from django.core.paginator import Paginator
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Count, Prefetch, Q, QuerySet, Sum

from core.errors import Conflict
from dbutils import partitions
from dbutils.plans import column_at_least, column_below
from dbutils.rows import row_loader
from games.choices import GameStatus, RoundStatus
from games.engine import (
    REGISTRY,
    RoundResult,
    bet_odds_report,
    event_label,
    main_paytables,
    odds_report,
    result_from_labels,
    round_events,
    verify_round,
)
from games.models import UNPAID_BET_STATUSES, Bet, GameInstance, Round, SeedPair
from games.rtp import LIMIT_NAMES
from wallet.models import Account, LedgerEntry

PUBLIC_REVEALED_PER_GAME = 10

# --- Game instances -----------------------------------------------------------------------------


def game_list(*, using: str = DEFAULT_DB_ALIAS) -> QuerySet[GameInstance]:
    return GameInstance.objects.using(using).all()


def game_get(*, slug: str, using: str = DEFAULT_DB_ALIAS) -> GameInstance:
    """The game with this slug; GameInstance.DoesNotExist when there is none."""
    return GameInstance.objects.using(using).get(slug=slug)


def game_odds(*, game: GameInstance) -> dict:
    """Exact odds and return to player of the game's current configuration (``manage.py odds --json``),
    with the limits of its RTP policy (null without one)."""
    policy = game.rtp_policy
    limits = None if policy is None else {"name": policy.name, **{
        name: None if getattr(policy, name) is None else str(getattr(policy, name)) for name in LIMIT_NAMES}}
    every = bet_odds_report(game.decks, {**main_paytables(game.multipliers), **game.side_bets})
    bets = {name: report for name, report in every["bets"].items() if game.offers(name)}
    return {**odds_report(game.decks, game.multipliers), "deals": every["deals"], "bets": bets, "policy": limits}


# --- Seed pairs ---------------------------------------------------------------------------------


def seed_pair_active(*, game: GameInstance, using: str = DEFAULT_DB_ALIAS) -> SeedPair | None:
    return SeedPair.objects.using(using).filter(game=game, retired_at__isnull=True).first()


def seed_pair_open_rounds(*, pair: SeedPair, using: str = DEFAULT_DB_ALIAS) -> int:
    return pair.rounds.using(using).filter(status=RoundStatus.OPEN).count()


def seed_pairs_revealed(*, game: GameInstance, using: str = DEFAULT_DB_ALIAS) -> QuerySet[SeedPair]:
    """The game's revealed pairs, most recently revealed first."""
    return SeedPair.objects.using(using).filter(game=game, revealed_at__isnull=False).order_by("-revealed_at", "-id")


def public_games(*, using: str = DEFAULT_DB_ALIAS) -> list:
    """Games players can see (all but retired), each with its active pair and latest revealed pairs.

    Only the hash, client seed and next nonce of an active pair are ever shown.
    """
    games = list(GameInstance.objects.using(using).exclude(status=GameStatus.RETIRED).order_by("slug"))
    for game in games:
        game.active_pair = seed_pair_active(game=game, using=using)
        game.recent_revealed = list(
            with_round_counts(seed_pairs_revealed(game=game, using=using))[:PUBLIC_REVEALED_PER_GAME]
        )
    return games


def with_round_counts(pairs: QuerySet[SeedPair]) -> QuerySet[SeedPair]:
    """Each pair with ``dealt_rounds`` (the rounds its seeds dealt: what its public page lists and a player
    can recompute) and ``voided_rounds`` (of those, voided and refunded): the admin and the public page
    count alike."""
    dealt = Q(rounds__outcome__isnull=False)
    return pairs.annotate(dealt_rounds=Count("rounds", filter=dealt),
                          voided_rounds=Count("rounds", filter=dealt & Q(rounds__status=RoundStatus.VOID)))


def seed_pair_revealed_rounds(*, pair: SeedPair, using: str = DEFAULT_DB_ALIAS) -> QuerySet:
    """The dealt rounds of a revealed pair, by nonce: what a player can recompute from its seed."""
    return (Round.objects.using(using).filter(seed_pair=pair, outcome__isnull=False).order_by("nonce")
            .values("nonce", "decks", "outcome", "player_score", "banker_score", "status"))


def seed_pair_round_counts(*, pair: SeedPair, using: str = DEFAULT_DB_ALIAS) -> dict:
    """{"dealt_rounds": n, "voided_rounds": m} of one pair, counted as with_round_counts counts."""
    return with_round_counts(SeedPair.objects.using(using).filter(pk=pair.pk)).values(
        "dealt_rounds", "voided_rounds").get()


def seed_pair_revealed_by_hash(*, server_seed_hash: str, using: str = DEFAULT_DB_ALIAS) -> SeedPair | None:
    """The revealed pair with this hash, if any: tells a player whose seed they recomputed."""
    return (SeedPair.objects.using(using).select_related("game")
            .filter(server_seed_hash=server_seed_hash, revealed_at__isnull=False).first())


# --- Rounds -------------------------------------------------------------------------------------


def round_list(*, filters: dict | None = None, using: str = DEFAULT_DB_ALIAS) -> QuerySet[Round]:
    """Rounds, newest first. Filters: ``game`` (slug), ``status``."""
    filters = filters or {}
    rounds = Round.objects.using(using).select_related("game", "seed_pair").order_by("-id")
    if filters.get("game"):
        rounds = rounds.filter(game__slug=filters["game"])
    if filters.get("status"):
        rounds = rounds.filter(status=filters["status"])
    return rounds


def round_get(*, round_id: int, using: str = DEFAULT_DB_ALIAS) -> Round:
    """The round with its game and seed pair; Round.DoesNotExist when there is none."""
    return Round.objects.using(using).select_related("game", "seed_pair").get(pk=round_id)


def round_for_bet(*, round_id: int, account_external_id: str,
                  using: str = DEFAULT_DB_ALIAS) -> tuple[Round, Account | None]:
    """The round with its game, and the account (None if unknown), in one statement and no lock.

    Round.DoesNotExist when there is no such round. What the bet's write relies on (the round
    still open, the balance still enough) is checked again by the write itself (games/writes.py).
    The statement is written once and its rows loaded as the ORM would (its converters): the
    busiest read of the system costs no query building.
    """
    sql, loaders = _round_for_bet_statement()
    with connections[using].cursor() as cursor:
        cursor.execute(sql, [account_external_id, round_id])
        row = cursor.fetchone()
    if row is None:
        raise Round.DoesNotExist("No such round.")
    round_, game, account = (load(row) for load in loaders)
    if using != DEFAULT_DB_ALIAS:  # the loaders mark what they load as read from the default database
        round_._state.db = game._state.db = account._state.db = using
    round_.game = game
    return round_, (account if account.pk is not None else None)


_BETTOR_FIELDS = ("id", "external_id", "currency", "balance")


@functools.cache
def _round_for_bet_statement() -> tuple[str, tuple]:
    round_fields, game_fields = Round._meta.concrete_fields, GameInstance._meta.concrete_fields
    bettor_fields = [Account._meta.get_field(name) for name in _BETTOR_FIELDS]
    columns = ", ".join([f"r.{connection.ops.quote_name(field.column)}" for field in round_fields]
                        + [f"g.{connection.ops.quote_name(field.column)}" for field in game_fields]
                        + [f"a.{connection.ops.quote_name(field.column)}" for field in bettor_fields])
    sql = (f"SELECT {columns} FROM {Round._meta.db_table} r "
           f"JOIN {GameInstance._meta.db_table} g ON g.id = r.game_id "
           f"LEFT JOIN {Account._meta.db_table} a ON a.external_id = %s WHERE r.id = %s")
    start_game, start_bettor = len(round_fields), len(round_fields) + len(game_fields)
    return sql, (row_loader(Round, round_fields, 0), row_loader(GameInstance, game_fields, start_game),
                 row_loader(Account, bettor_fields, start_bettor))


def round_recall(*, round_id: int, using: str = DEFAULT_DB_ALIAS) -> Round:
    """The round as recalled for support: with its game, seed pair and every bet (oldest first)."""
    bets = Bet.objects.using(using).select_related("account", "client").order_by("id")
    return (
        Round.objects.using(using).select_related("game", "seed_pair")
        .prefetch_related(Prefetch("bets", queryset=bets))
        .get(pk=round_id)
    )


@dataclass(frozen=True)
class RoundSearchPage:
    """One page of a round search, newest first, with each round's bet count and totals."""

    rounds: list
    page: int
    has_next: bool

    @property
    def has_previous(self) -> bool:
        return self.page > 1


def round_search(*, round_id: int | None = None, account: str = "", game: GameInstance | None = None,
                 opened_from: datetime | None = None, opened_to: datetime | None = None,
                 using: str = DEFAULT_DB_ALIAS) -> QuerySet[Round]:
    """Rounds matching every criterion given, newest first: an id, an account (external id) that bet
    on them, a game, and the time they were opened (``opened_from`` inclusive, ``opened_to`` exclusive)."""
    rounds = Round.objects.using(using).select_related("game", "seed_pair").order_by("-id")
    if round_id is not None:
        rounds = rounds.filter(pk=round_id)
    if account:
        # A subquery rather than a join: a round with several bets of the account is listed once.
        rounds = rounds.filter(pk__in=Bet.objects.filter(account__external_id=account).values("round_id"))
    if game is not None:
        rounds = rounds.filter(game=game)
    if opened_from is not None:
        rounds = rounds.filter(opened_at__gte=opened_from)
    if opened_to is not None:
        rounds = rounds.filter(opened_at__lt=opened_to)
    return rounds


RECALL_MAX_PAGE = 100_000


def round_search_page(*, page: int = 1, per_page: int = 50, using: str = DEFAULT_DB_ALIAS,
                      **criteria) -> RoundSearchPage:
    """A page of ``round_search``: no COUNT of the matches, one query more for the bet totals."""
    page = min(max(1, page), RECALL_MAX_PAGE)  # the offset must stay a number the database holds
    start = (page - 1) * per_page
    rounds = list(round_search(using=using, **criteria)[start:start + per_page + 1])
    has_next = len(rounds) > per_page
    rounds = rounds[:per_page]
    totals = {
        row["round_id"]: row for row in
        Bet.objects.using(using).filter(round_id__in=[round_.pk for round_ in rounds]).order_by()
        .values("round_id").annotate(count=Count("id"), staked=Sum("stake"), paid=Sum("payout"))
    }
    for round_ in rounds:
        row = totals.get(round_.pk, {})
        round_.bet_count = row.get("count", 0)
        round_.staked = row.get("staked")
        round_.paid = row.get("paid")
    return RoundSearchPage(rounds=rounds, page=page, has_next=has_next)


def _stored_result(round_: Round) -> dict:
    return {
        "server_seed_hash": round_.seed_pair.server_seed_hash,
        "cards": list(round_.cards),
        "player": {"cards": list(round_.player_cards), "score": round_.player_score},
        "banker": {"cards": list(round_.banker_cards), "score": round_.banker_score},
        "natural": round_.natural,
        "outcome": round_.outcome,
    }


def round_verification(*, round_: Round) -> dict:
    """Recompute a dealt round from its revealed seed pair with the engine and compare.

    A Conflict while the pair is unrevealed (the seed is still secret) or when the round was
    never dealt (voided while open: there is nothing stored to compare).
    """
    pair = round_.seed_pair
    server_seed = pair.revealed_server_seed
    if server_seed is None:
        raise Conflict("server_seed", "The round's seed pair is not revealed yet; rotate the game's "
                       "seeds to reveal it, then verify.", code="seed_unrevealed")
    if not round_.cards:
        raise Conflict("round", f"The round is {round_.status} and was never dealt; there is nothing "
                       "to verify.", code="round_not_dealt")
    stored = _stored_result(round_)
    recomputed = verify_round(server_seed, pair.client_seed, round_.nonce, round_.decks)
    mismatches = sorted(key for key in stored if stored[key] != recomputed.get(key))
    return {
        "round": round_.pk,
        "verified": not mismatches,
        "mismatches": mismatches,
        "inputs": {
            "server_seed": server_seed,
            "client_seed": pair.client_seed,
            "nonce": round_.nonce,
            "decks": round_.decks,
        },
        "stored": stored,
        "recomputed": recomputed,
    }


def deal_bet_events(result: RoundResult) -> list[dict]:
    """Every registered bet type's event on a dealt round, in the registry's order, for a page's
    table: the bet type's label and the event as people read it ("WIN_BY_5": "Win by 5")."""
    return [{"bet_type": name, "label": REGISTRY[name].label, "event": event,
             "event_label": event_label(event)}
            for name, event in round_events(result).items()]


def round_bet_events(*, round_: Round) -> list[dict]:
    """``deal_bet_events`` of a round as stored (its cards' labels)."""
    return deal_bet_events(result_from_labels(round_.cards, round_.player_cards, round_.banker_cards))


# --- Bets ---------------------------------------------------------------------------------------


def bet_list(*, filters: dict | None = None, using: str = DEFAULT_DB_ALIAS) -> QuerySet[Bet]:
    """Bets, newest first. Filters: ``round`` (id), ``account`` (external id), ``status``, ``game`` (slug)."""
    filters = filters or {}
    bets = Bet.objects.using(using).select_related("round__game", "account", "client").order_by("-id")
    if filters.get("round") is not None:
        bets = bets.filter(round_id=filters["round"])
    if filters.get("account"):
        bets = bets.filter(account__external_id=filters["account"])
    if filters.get("status"):
        bets = bets.filter(status=filters["status"])
    if filters.get("game"):
        bets = bets.filter(round__game__slug=filters["game"])
    return bets


def bet_get(*, bet_id: int, using: str = DEFAULT_DB_ALIAS) -> Bet:
    return Bet.objects.using(using).select_related("round__game", "account", "client").get(pk=bet_id)


# --- An account's bets --------------------------------------------------------------------------


def account_bets(*, account: Account, page=1, per_page: int = 50, using: str = DEFAULT_DB_ALIAS):
    """A page of the account's bets, newest first, with their rounds and games."""
    bets = Bet.objects.using(using).filter(account=account).select_related("round__game").order_by("-id")
    return Paginator(bets, per_page).get_page(page)


def account_bets_of_rounds(*, account: str, round_ids, using: str = DEFAULT_DB_ALIAS) -> dict:
    """{round id: [the account's (external id) bets on it, oldest first, each with its round]}: a page
    of rounds recalled by account, with what the player bet on each."""
    bets = (Bet.objects.using(using).filter(account__external_id=account, round_id__in=set(round_ids))
            .select_related("round").order_by("pk"))
    found: dict = {}
    for bet in bets:
        found.setdefault(bet.round_id, []).append(bet)
    return found


def bets_by_id(bet_ids, *, using: str = DEFAULT_DB_ALIAS) -> dict:
    """{id: bet} with its round and game, for bets a page names by id (a ledger page, say)."""
    bets = Bet.objects.using(using).filter(pk__in=set(bet_ids)).select_related("round__game")
    return {bet.pk: bet for bet in bets}


def ledger_entries_of_bets(bet_ids, *, using: str = DEFAULT_DB_ALIAS) -> dict:
    """{bet id: [its ledger entries, oldest first]}: each bet's stake, payout or refund."""
    entries: dict = {}
    ledger = LedgerEntry.objects.using(using).filter(bet_id__in=set(bet_ids)).select_related("account")
    for entry in ledger.order_by("pk"):
        entries.setdefault(entry.bet_id, []).append(entry)
    return entries


# --- The bets' monthly partitions ---------------------------------------------------------------

# A bet's id carries the month of the database's clock when it was placed, a round's opened_at the
# application's: this much leeway between the two clocks.
CLOCK_LEEWAY = timedelta(minutes=1)


def _utc_with_leeway(moment: datetime, leeway: timedelta) -> datetime:
    """``moment`` moved by ``leeway``, in UTC; at the calendar's edge (a filter's year 1 or 9999), the edge."""
    try:
        return (moment + leeway).astimezone(UTC)
    except OverflowError:
        return (datetime.min if leeway < timedelta(0) else datetime.max).replace(tzinfo=UTC)


def bet_ids_placed(*, since: datetime, until: datetime, using: str = DEFAULT_DB_ALIAS) -> Q:
    """A filter on the bets' ids that keeps only the partitions that can hold the bets placed from
    ``since`` until ``until`` (those of rounds opened since ``since``, as a round takes bets only
    once open): the months between, and the legacy partition (the bets from before the table was
    partitioned) only while its last bet was placed since ``since``. The bounds are written into the
    statement (dbutils.plans): bound as parameters, a prepared statement's generic plan took a
    month's range for a few rows, scanned all of it and sorted it for a page of 100 bets (418 ms
    against 0.14 ms beside 2 million bets of the month), or ANDed it with a settlement batch's bets."""
    since, until = _utc_with_leeway(since, -CLOCK_LEEWAY), _utc_with_leeway(until, CLOCK_LEEWAY)
    ids = column_at_least("id", partitions.month_start_id(since))
    if (until.year, until.month) < (MAXYEAR, 12):  # December of the last year has no month after it
        ids &= column_below("id", partitions.month_start_id(partitions.next_month(until)))
    legacy_end = partitions.legacy_end(Bet._meta.db_table, using=using)
    last_legacy = Bet.objects.using(using).filter(pk__lt=legacy_end).order_by("-pk").values_list(
        "placed_at", flat=True).first()
    if last_legacy is not None and last_legacy >= since:
        ids |= column_below("id", legacy_end)
    return ids


def bets_archive_hold(before, using: str = DEFAULT_DB_ALIAS) -> tuple:
    """The first month of bets kept online when the months before ``before`` are archived, and why
    (audit.partitioning asks); ``(before, "")`` when every one of them may go. A month stays while a
    bet of it is not settled (its settlement would find it gone) or is paid or refunded by a ledger
    entry of a month kept online (that entry's foreign key forbids the detach). A round dealt across
    midnight at a month's end pays in the next month, so in a game that never stops the bets of the
    last month before ``before`` stay, and go with the next archive."""
    low, high = partitions.legacy_end(Bet._meta.db_table, using=using), partitions.month_start_id(before)
    unsettled = (Bet.objects.using(using).filter(pk__gte=low, pk__lt=high, status__in=UNPAID_BET_STATUSES)
                 .order_by("pk").values_list("pk", flat=True).first())
    paid_later = (LedgerEntry.objects.using(using).filter(pk__gte=high, bet_id__gte=low, bet_id__lt=high)
                  .order_by("bet_id").values_list("bet_id", "pk").first())
    holds = []
    if unsettled is not None:
        holds.append((unsettled, f"bet {unsettled} is not settled yet"))
    if paid_later is not None:
        bet_id, entry_id = paid_later
        holds.append((bet_id, f"bet {bet_id} is paid or refunded by ledger entry {entry_id}, of a month kept online"))
    if not holds:
        return before, ""
    bet_id, why = min(holds)
    return partitions.month_of_id(bet_id), why
