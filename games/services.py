"""Business actions on games, seed pairs, rounds and bets.

Each action is one transaction that also writes its audit event; side effects on other systems
(enqueueing settlement) happen only once the transaction has committed.
"""

import secrets
from dataclasses import dataclass
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from audit.choices import AuditAction
from audit.context import log_context
from audit.services import audit_record, audit_record_many
from audit.validators import required_reason
from core.currencies import amount_text, in_places, places_problem
from core.errors import Conflict
from core.money import parse_money
from core.services import model_update
from dbutils.updates import update_rows
from games import locks, selectors, writes
from games.choices import BetStatus, BetType, GameStatus, RoundStatus
from games.engine import Dealer, server_seed_hash
from games.models import Bet, BetKey, GameInstance, Round, RtpPolicy, SeedPair
from games.signals import round_dealt, round_voided, seeds_revealed
from games.validators import is_safe_client_seed, validate_client_seed_field, validate_idempotency_key
from wallet.choices import LedgerKind
from wallet.models import Account
from wallet.services import ledger_post, ledger_post_many
from wallet.validators import validate_stake

ROUND_OPEN_ATTEMPTS = 3


def _checked_client_seed(client_seed) -> str:
    try:
        validate_client_seed_field(client_seed)
    except ValidationError as error:
        raise ValidationError({"client_seed": error.messages}) from None
    return client_seed


# --- Game instances -----------------------------------------------------------------------------

def game_create(*, actor, client_seed: str | None = None, reason: str = "", **fields) -> GameInstance:
    """A new game with its first seed pair; ``reason`` (optional here) goes to its audit event."""
    try:
        with transaction.atomic():
            game = GameInstance(**fields)
            if game.rtp_policy_id is not None:
                game.rtp_policy = locks.share_rtp_policy(game.rtp_policy_id)
            game.full_clean()
            game.save()
            audit_record(actor=actor, action=AuditAction.GAME_CREATED, obj=game, after=game.configuration(),
                         reason=(reason or "").strip())
            _seed_pair_start(game=game, client_seed=client_seed)
            return game
    except IntegrityError:
        # Two requests created the same slug at once; the database kept one.
        if GameInstance.objects.filter(slug=fields.get("slug")).exists():
            raise ValidationError({"slug": "Game instance with this Slug already exists."}) from None
        raise


@transaction.atomic
def game_update(*, game_id: int, actor, reason: str, changes: dict) -> GameInstance:
    """Change a game's configuration; every change carries a reason and is audited."""
    reason = required_reason(reason)
    unknown = set(changes) - set(GameInstance.CONFIGURATION_FIELDS)
    if unknown:
        raise ValidationError({name: "This field cannot be changed." for name in sorted(unknown)})
    game = locks.lock_game(game_id)
    currency = game.currency

    def check(game):
        if game.rtp_policy_id is not None:
            game.rtp_policy = locks.share_rtp_policy(game.rtp_policy_id)  # checked against its limits as they stand
        if game.currency != currency:
            _currency_change_check(game, currency)

    update = model_update(game, changes, view=GameInstance.configuration, check=check)
    before, after = update.before, update.after
    if "status" in after:
        audit_record(actor=actor, action=AuditAction.GAME_STATUS_CHANGED, obj=game,
                     before={"status": before["status"]}, after={"status": after["status"]}, reason=reason)
    configured = sorted(set(after) - {"status"})
    if configured:
        audit_record(actor=actor, action=AuditAction.GAME_CONFIGURED, obj=game, reason=reason,
                     before={name: before[name] for name in configured},
                     after={name: after[name] for name in configured})
    return game


def _currency_change_check(game: GameInstance, currency: str) -> None:
    """Refuse to move a game (locked) out of ``currency`` once it has taken a bet or dealt a round: its
    money, and the daily aggregates kept per game, are in that currency.

    A bet in flight is refused too: a bet's one statement reads the game's currency as it stood when
    the statement began (games/writes.py), so one under way now would be written in the old currency
    after this change commits. A bet needs an OPEN round, so the change also waits until no round of
    the game is open, with new rounds held off meanwhile by the game's active seed pair (locked last,
    as games/locks.py orders it; rounds open on it)."""
    if locks.lock_active_seed_pair(game.pk) is None:
        raise Conflict("seed_pair", "The seed pair was rotated meanwhile; try again.")
    # A dealt round too: its bets may be archived (detached with their month), not its rounds.
    took_a_bet = Exists(Bet.objects.filter(round_id=OuterRef("pk")))
    if game.rounds.filter(Q(status__in=[RoundStatus.DEALT, RoundStatus.SETTLED]) | took_a_bet).exists():
        raise ValidationError({"currency": f"The game has taken bets or dealt rounds in {currency}; "
                                           "its currency cannot change."})
    if game.rounds.filter(status=RoundStatus.OPEN).exists():
        raise ValidationError({"currency": "A round of the game is open and may be taking a bet in "
                                           f"{currency}: deal or void it before changing the currency."})


# --- RTP policies -------------------------------------------------------------------------------

@transaction.atomic
def rtp_policy_create(*, actor, **fields) -> RtpPolicy:
    policy = RtpPolicy(**fields)
    policy.full_clean()
    policy.save()
    audit_record(actor=actor, action=AuditAction.RTP_POLICY_CREATED, obj=policy, after=policy.configuration())
    return policy


@transaction.atomic
def rtp_policy_update(*, policy_id: int, actor, reason: str, changes: dict) -> RtpPolicy:
    """Change a policy's limits; refused while a game assigned to it would break them."""
    reason = required_reason(reason)
    unknown = set(changes) - set(RtpPolicy.CONFIGURATION_FIELDS)
    if unknown:
        raise ValidationError({name: "This field cannot be changed." for name in sorted(unknown)})
    policy = locks.lock_rtp_policy(policy_id)
    update = model_update(policy, changes, view=RtpPolicy.configuration)
    if update:
        audit_record(actor=actor, action=AuditAction.RTP_POLICY_CHANGED, obj=policy, before=update.before,
                     after=update.after, reason=reason)
    return policy


# --- Seed pairs ---------------------------------------------------------------------------------

def _seed_pair_start(*, game: GameInstance, client_seed: str | None) -> SeedPair:
    server_seed = secrets.token_hex(32)
    pair = SeedPair.objects.create(
        game=game,
        server_seed=server_seed,
        server_seed_hash=server_seed_hash(server_seed),
        client_seed=_checked_client_seed(client_seed) if client_seed is not None else secrets.token_hex(8),
    )
    audit_record(actor="system:seed-generator", action=AuditAction.SEED_PAIR_COMMITTED, obj=pair,
                 after={"game": game.slug, "server_seed_hash": pair.server_seed_hash,
                        "client_seed": pair.client_seed})
    return pair


@transaction.atomic
def seed_rotate(*, game_id: int, actor, reason: str, client_seed: str | None = None) -> tuple[SeedPair, SeedPair]:
    """Retire the active pair and start a new one, at any time, for ``reason`` (required, audited).
    Returns (retired pair, new pair).

    The new pair takes the next round at once. The retired pair is revealed now if none of its
    rounds is open, or else as soon as its last open round is dealt or voided (``_reveal_if_done``);
    ``retired.is_revealed`` tells which. Under steady play some round is nearly always open, so
    waiting for a quiet moment would starve rotation.
    """
    reason = required_reason(reason)
    if client_seed is not None:
        client_seed = _checked_client_seed(client_seed)
    pair = locks.lock_active_seed_pair(game_id)
    if pair is None:
        raise Conflict("seed_pair", "The seed pair was rotated meanwhile; try again.")
    # Dealing and voiding take the pair's lock once their rounds are closed, and only then decide
    # on its reveal: a round closing meanwhile is counted open here, and its closer reveals the pair.
    open_rounds = pair.rounds.filter(status=RoundStatus.OPEN).count()
    pair.retired_at = timezone.now()
    pair.save(update_fields=["retired_at"])
    # A pair an earlier release made may have a client seed outside the safe alphabet: it is not
    # carried over (the new pair gets a random one, as a new game does).
    kept = pair.client_seed if is_safe_client_seed(pair.client_seed) else None
    new_pair = _seed_pair_start(game=pair.game, client_seed=client_seed or kept)
    audit_record(actor=actor, action=AuditAction.SEED_PAIR_RETIRED, obj=pair,
                 after={"server_seed_hash": pair.server_seed_hash, "open_rounds": open_rounds,
                        "successor_hash": new_pair.server_seed_hash}, reason=reason)
    if not open_rounds:
        _seed_pair_reveal(pair, actor=actor)
    return pair, new_pair


def _seed_pair_reveal(pair: SeedPair, *, actor) -> None:
    pair.revealed_at = timezone.now()
    pair.save(update_fields=["revealed_at"])
    audit_record(actor=actor, action=AuditAction.SEED_PAIR_REVEALED, obj=pair,
                 after={"server_seed_hash": pair.server_seed_hash, "server_seed": pair.server_seed,
                        "rounds_played": pair.next_nonce})
    seeds_revealed.send(sender=SeedPair, pair=pair)


def _reveal_if_done(pair: SeedPair) -> None:
    """Reveal a retired pair (locked by the caller) once none of its rounds is open.

    The reveal commits with the deal or void that closed the last round, or not at all.
    """
    if pair.is_active or pair.is_revealed or pair.rounds.filter(status=RoundStatus.OPEN).exists():
        return
    _seed_pair_reveal(pair, actor="system:seed-rotation")


# --- Rounds -------------------------------------------------------------------------------------

def round_open(*, game_id: int, actor) -> Round:
    """Open a round on the game's active seed pair, taking the pair's next nonce (rounds_open of one)."""
    return rounds_open(game_ids=[game_id], actor=actor)[0]


def rounds_open(*, game_ids: list, actor) -> list[Round]:
    """round_open for many rounds in one transaction: one round per item of ``game_ids`` (a game may
    come many times), opened in that order, with the nonces and audit events that as many calls of
    round_open in a row would give, in a few statements whatever their number.

    The games' pairs are locked in ascending id order, then the games read (as round_open does). A
    Conflict, with nothing opened, when any of the games is not active.
    """
    game_ids = list(game_ids)
    if not game_ids:
        return []
    for _attempt in range(ROUND_OPEN_ATTEMPTS):
        with transaction.atomic():
            pairs = locks.lock_active_seed_pairs(game_ids)
            if len(pairs) != len(set(game_ids)):
                continue  # a pair was revealed while we waited: the next attempt sees the new one
            games = GameInstance.objects.in_bulk(pairs)
            for game in games.values():
                if game.status != GameStatus.ACTIVE:
                    raise Conflict("game", f"The game is {game.status}; it opens no rounds.", code="game_inactive")
            rounds = []
            for game_id in game_ids:
                pair, game = pairs[game_id], games[game_id]
                rounds.append(Round(game=game, seed_pair=pair, nonce=pair.next_nonce, decks=game.decks))
                pair.next_nonce += 1
            for pair in pairs.values():
                pair.save(update_fields=["next_nonce"])
            Round.objects.bulk_create(rounds)
            if len(rounds) == 1:
                log_context(game=rounds[0].game_id, round=rounds[0].pk)
            audit_record_many(actor=actor, action=AuditAction.ROUND_OPENED, changes=[
                (round_, {"game": round_.game.slug, "nonce": round_.nonce,
                          "server_seed_hash": round_.seed_pair.server_seed_hash}) for round_ in rounds])
            return rounds
    raise Conflict("seed_pair", "The seed pair kept rotating; try again.")


def _deal(round_: Round, pair: SeedPair, dealt_at) -> None:
    """Deal an OPEN round by PF-1 (unsaved): its cards, hands, scores and outcome, DEALT."""
    if pair.is_revealed:  # never happens (a pair is revealed with no round open); never deal a known seed
        raise Conflict("round", "The round's seed pair is already revealed; void the round.")
    result = Dealer(pair.server_seed, pair.client_seed).play(round_.nonce, round_.decks)
    dealt = result.as_dict()
    round_.cards = dealt["cards"]
    round_.player_cards = dealt["player"]["cards"]
    round_.banker_cards = dealt["banker"]["cards"]
    round_.player_score = result.player_score
    round_.banker_score = result.banker_score
    round_.natural = result.natural
    round_.outcome = result.outcome
    round_.status = RoundStatus.DEALT
    round_.dealt_at = dealt_at


DEALT_FIELDS = ("cards", "player_cards", "banker_cards", "player_score", "banker_score", "natural", "outcome",
                "status", "dealt_at")


def round_deal(*, round_id: int, actor) -> Round:
    """Close betting and deal by PF-1 (rounds_deal of one). Dealing a dealt round again changes nothing."""
    return rounds_deal(round_ids=[round_id], actor=actor)[0]


@transaction.atomic
def rounds_deal(*, round_ids, actor) -> list[Round]:
    """round_deal for many rounds in one transaction, in a few statements whatever their number:
    the rounds (ascending by id) with the cards, audit events, reveals and settlement message that
    round_deal round by round would give.

    The rounds are locked (ascending by id), then, once dealt, their pairs (games/locks.py says
    why last). A round already dealt changes nothing; a Conflict, with nothing dealt, when any is
    neither OPEN nor dealt.
    """
    if not round_ids:
        return []
    rounds = locks.lock_rounds(round_ids)
    missing = sorted(set(round_ids) - {round_.pk for round_ in rounds})
    if missing:
        raise Round.DoesNotExist(f"No round {', '.join(map(str, missing))}.")
    if len(rounds) == 1:
        log_context(game=rounds[0].game_id, round=rounds[0].pk)  # carried to its settlement (audit.task_context)
    dealt_at, dealt = timezone.now(), []
    for round_ in rounds:
        if round_.status in (RoundStatus.DEALT, RoundStatus.SETTLED):
            continue
        if round_.status != RoundStatus.OPEN:
            raise Conflict("round", f"Round {round_.pk} is {round_.status}; it cannot be dealt.")
        _deal(round_, round_.seed_pair, dealt_at)  # read, not locked: no pair of an OPEN round is revealed
        dealt.append(round_)
    update_rows(Round, DEALT_FIELDS, [(round_.pk, *(getattr(round_, name) for name in DEALT_FIELDS))
                                      for round_ in dealt])
    audit_record_many(actor=actor, action=AuditAction.ROUND_DEALT,
                      changes=[(round_, {"cards": round_.cards, "outcome": round_.outcome}) for round_ in dealt])
    for pair in locks.lock_seed_pairs(round_.seed_pair_id for round_ in rounds).values():
        _reveal_if_done(pair)
    if dealt:
        transaction.on_commit(lambda: round_dealt.send(sender=Round, round_ids=[round_.pk for round_ in dealt]))
    return rounds


@transaction.atomic
def round_void(*, round_id: int, actor, reason: str) -> Round:
    """Void an OPEN or DEALT round and refund every pending bet."""
    reason = required_reason(reason)
    round_ = locks.lock_round(round_id)
    if round_.status not in (RoundStatus.OPEN, RoundStatus.DEALT):
        raise Conflict("round", f"The round is {round_.status}; only open or dealt rounds can be voided.")
    now = timezone.now()
    bets = list(round_.bets.filter(status=BetStatus.PENDING).order_by("pk"))
    accounts = locks.lock_accounts(bet.account_id for bet in bets)
    for bet in bets:
        bet.status = BetStatus.REFUNDED
        bet.payout = bet.stake
        bet.settled_at = now
        account = accounts[bet.account_id]
        ledger_post(account=account, bet_id=bet.pk, kind=LedgerKind.REFUND, amount=bet.stake)
        audit_record(actor=actor, action=AuditAction.BET_REFUNDED, obj=bet,
                     after={"payout": amount_text(bet.payout, account.currency)}, reason=reason)
    Bet.objects.bulk_update(bets, ["status", "payout", "settled_at"])
    before_status = round_.status
    round_.status = RoundStatus.VOID
    round_.voided_at = now
    round_.void_reason = reason
    round_.save(update_fields=["status", "voided_at", "void_reason"])
    audit_record(actor=actor, action=AuditAction.ROUND_VOIDED, obj=round_, before={"status": before_status},
                 after={"status": RoundStatus.VOID, "bets_refunded": len(bets)}, reason=reason)
    round_voided.send(sender=Round, round_=round_)
    _reveal_if_done(locks.lock_seed_pairs([round_.seed_pair_id])[round_.seed_pair_id])
    return round_


# --- Bets ---------------------------------------------------------------------------------------

# A bulk request whose keys a concurrent request keeps taking gives up after this many tries.
BULK_ATTEMPTS = 3


@dataclass(frozen=True)
class WantedBet:
    """A bet as the client asks for it: its own fields checked, not yet the round or the account."""

    account_external_id: str
    bet_type: str
    stake: Decimal
    idempotency_key: str


@dataclass(frozen=True)
class BetOutcome:
    """One item of a bulk request: the bet (new, or the original on a replay) or why it was refused."""

    bet: Bet | None = None
    created: bool = False
    error: Exception | None = None


def _wanted_bet(*, account_external_id, bet_type, stake, idempotency_key) -> WantedBet:
    if bet_type not in BetType.values:
        raise ValidationError({"bet_type": f"Must be one of {', '.join(BetType.values)}."})
    stake = parse_money(stake, field="stake", validator=validate_stake)
    try:
        validate_idempotency_key(idempotency_key or "")
    except ValidationError as error:
        raise ValidationError({"idempotency_key": error.messages}) from None
    return WantedBet(str(account_external_id), bet_type, stake, idempotency_key)


def _earlier_bets(client, keys) -> dict:
    """The client's bets under these idempotency keys (found by BetKey), by key."""
    keyed = BetKey.objects.filter(client=client, idempotency_key__in=set(keys))
    # Nearly always none: a plain look-up first, the bets with what a replay answers only if any.
    if not keyed.exists():
        return {}
    earlier = Bet.objects.filter(pk__in=keyed.values("bet_id"))
    return {bet.idempotency_key: bet for bet in earlier.select_related("round__game", "account", "client")}


def _replayed(earlier: Bet, round_id: int, wanted: WantedBet) -> Bet:
    """The original bet for a replay of the same content; the same key with other content conflicts."""
    if (earlier.round_id, earlier.account.external_id, earlier.bet_type, earlier.stake) != (
            round_id, wanted.account_external_id, wanted.bet_type, wanted.stake):
        raise Conflict("idempotency_key", "This key was used for a different bet.", code="idempotency_key_reused")
    return earlier


# The code of a stake refused for the balance (the metrics count refusals by it).
BALANCE_EXCEEDED = "insufficient_balance"


def _balance_exceeded() -> ValidationError:
    return ValidationError({"stake": ValidationError("Exceeds the account's balance.", code=BALANCE_EXCEEDED)})


def _refusal(round_: Round, account: Account | None, balance: Decimal | None, wanted: WantedBet):
    """Why this round and account cannot take the bet now, as the error to raise; None if they can."""
    game = round_.game
    if round_.status != RoundStatus.OPEN:
        return Conflict("round", f"The round is {round_.status}; it takes no bets.", code="round_not_open")
    if game.status != GameStatus.ACTIVE:
        return Conflict("round", f"The game is {game.status}; it takes no bets.", code="game_inactive")
    if not game.offers(wanted.bet_type):
        return ValidationError({"bet_type": ValidationError(f"This game does not offer the {wanted.bet_type} bet.",
                                                            code="bet_type_not_offered")})
    problem = places_problem(wanted.stake, game.currency)
    if problem:
        return ValidationError({"stake": ValidationError(problem, code="too_many_places_for_currency")})
    if not game.min_bet <= wanted.stake <= game.max_bet:
        return ValidationError({"stake": f"Must be between {in_places(game.min_bet, game.currency)} and "
                                         f"{in_places(game.max_bet, game.currency)} {game.currency}."})
    if account is None:
        return ValidationError({"account": "No such account."})
    if account.currency != game.currency:
        return ValidationError({"account": f"The account holds {account.currency}; the game plays in {game.currency}."})
    if wanted.stake > balance:
        return _balance_exceeded()
    return None


def _new_bet(round_: Round, account: Account, wanted: WantedBet, client, placed_at) -> Bet:
    multiplier, paytable = round_.game.terms(wanted.bet_type)
    return Bet(round=round_, account=account, client=client, bet_type=wanted.bet_type, stake=wanted.stake,
               multiplier=multiplier, paytable=paytable, idempotency_key=wanted.idempotency_key, placed_at=placed_at)


def _accepted(round_id: int, wanted: WantedBet, bet: Bet | None = None) -> dict:
    """The audit content of an accepted bet. Without its terms (multiplier, and a side bet's paytable)
    for the single bet's one statement, which adds those it reads from the game (games/writes.py)."""
    after = {"round": round_id, "account": wanted.account_external_id, "bet_type": wanted.bet_type,
             "stake": str(wanted.stake)}
    if bet is not None:
        after["multiplier"] = str(bet.multiplier)
        if bet.paytable is not None:
            after["paytable"] = bet.paytable
    return after


def bet_place(*, round_id: int, account_external_id: str, bet_type: str, stake, idempotency_key: str,
              client) -> tuple[Bet, bool]:
    """Accept a bet and debit its stake. Returns (bet, created); Round.DoesNotExist for no such round.

    A replay with the same idempotency key and the same content returns the original bet and
    debits nothing; the same key with different content is a Conflict. A new key (the usual case)
    is not looked up first: BetKey's primary key (client, key), written with the bet, refuses a used
    one, and only then, or when the bet is refused for any other reason, is the original looked for.
    """
    wanted = _wanted_bet(account_external_id=account_external_id, bet_type=bet_type, stake=stake,
                         idempotency_key=idempotency_key)
    try:
        bet, created = _bet_accept(round_id=round_id, wanted=wanted, client=client), True
    except (Round.DoesNotExist, ValidationError, Conflict, IntegrityError):
        earlier = _earlier_bets(client, [wanted.idempotency_key]).get(wanted.idempotency_key)
        if earlier is None:
            raise
        bet, created = _replayed(earlier, round_id, wanted), False
    # The game when the bet's round is at hand (it is, for a new bet): the log reads nothing more.
    log_context(game=bet.round.game_id if Bet.round.is_cached(bet) else None, round=bet.round_id, bet=bet.pk)
    return bet, created


def _bet_accept(*, round_id: int, wanted: WantedBet, client) -> Bet:
    """One statement checks and writes (games/writes.py), and only a refusal reads again to say why:
    a new bet is that statement alone, with no BEGIN or COMMIT to wait for. With that shortcut off
    (settings.BET_IN_ONE_STATEMENT), one transaction holds the round FOR SHARE past its gate and the
    account FOR UPDATE (games/locks.py), checks and writes through the ORM."""
    placed_at = timezone.now()
    with writes.bet_transaction():
        if writes.checks_in_statement():
            bet = writes.bet_place_checked(
                round_id=round_id, account_external_id=wanted.account_external_id, bet_type=wanted.bet_type,
                stake=wanted.stake, idempotency_key=wanted.idempotency_key, client=client, placed_at=placed_at,
                action=AuditAction.BET_ACCEPTED, after=_accepted(round_id, wanted))
            if bet is None:
                # Checked again, the refusal that the statement met (or the balance, spent since by
                # concurrent bets and topped up again).
                round_, account = selectors.round_for_bet(round_id=round_id,
                                                          account_external_id=wanted.account_external_id)
                raise _refusal(round_, account, account and account.balance, wanted) or _balance_exceeded()
            return bet
        round_ = locks.share_rounds([round_id])[round_id]
        account = locks.lock_accounts_by_external_id([wanted.account_external_id]).get(wanted.account_external_id)
        refusal = _refusal(round_, account, account and account.balance, wanted)
        if refusal:
            raise refusal
        bet = _new_bet(round_, account, wanted, client, placed_at)
        writes.bet_insert(bet, actor=client, action=AuditAction.BET_ACCEPTED, after=_accepted(round_id, wanted, bet))
        return bet


def bets_place(*, round_id: int, items: dict, client) -> dict:
    """Place many bets on one round, each on its own: {index: fields} → {index: BetOutcome}.

    Each item is checked and idempotent as a single bet is; the accepted ones are written together
    in one transaction (a few set-based statements). Round.DoesNotExist for no such round.
    """
    return bets_place_rounds(items_by_round={round_id: items}, client=client)[round_id]


def bets_place_rounds(*, items_by_round: dict, client) -> dict:
    """bets_place for many rounds in one transaction: {round id: {index: fields}} → {round id:
    {index: BetOutcome}}, what bets_place round after round (ascending by id) would answer, in the
    few statements of one round's (besides one for each round's gate).
    Round.DoesNotExist, with nothing written, when any round is missing.
    """
    outcomes = {round_id: {} for round_id in items_by_round}
    wanted = {round_id: {} for round_id in items_by_round}
    for round_id, items in items_by_round.items():
        for index, fields in items.items():
            try:
                wanted[round_id][index] = _wanted_bet(**fields)
            except ValidationError as error:
                outcomes[round_id][index] = BetOutcome(error=error)
    for _attempt in range(BULK_ATTEMPTS):
        try:
            accepted = _bets_accept(wanted_by_round=wanted, client=client)
        except IntegrityError:
            continue  # a concurrent request took one of these keys: the next attempt answers it as a replay
        return {round_id: {**outcomes[round_id], **accepted[round_id]} for round_id in items_by_round}
    raise Conflict("idempotency_key", "Concurrent requests kept using these keys; try again.", code="busy")


@transaction.atomic
def _bets_accept(*, wanted_by_round: dict, client) -> dict:
    rounds = locks.share_rounds(wanted_by_round)
    every = [(round_id, index, bet) for round_id in sorted(wanted_by_round)
             for index, bet in sorted(wanted_by_round[round_id].items())]
    earlier = _earlier_bets(client, (bet.idempotency_key for _round, _index, bet in every))
    accounts = locks.lock_accounts_by_external_id(
        bet.account_external_id for _round, _index, bet in every if bet.idempotency_key not in earlier)
    balances = {account.pk: account.balance for account in accounts.values()}
    placed_at = timezone.now()
    outcomes = {round_id: {} for round_id in wanted_by_round}
    accepted, first_with_key = {}, {}  # by (round id, index); the first of each key
    for round_id, index, bet_wanted in every:
        key = bet_wanted.idempotency_key
        if key in earlier or key in first_with_key:
            continue  # a replay: answered below, once the bets it may repeat have ids
        account = accounts.get(bet_wanted.account_external_id)
        refusal = _refusal(rounds[round_id], account, account and balances[account.pk], bet_wanted)
        if refusal:
            outcomes[round_id][index] = BetOutcome(error=refusal)
            continue
        balances[account.pk] -= bet_wanted.stake
        accepted[round_id, index] = _new_bet(rounds[round_id], account, bet_wanted, client, placed_at)
        first_with_key[key] = round_id, index
    if accepted:
        # Inserted in the order of their keys, and their keys too (writes.bet_keys_insert says why).
        accepted = dict(sorted(accepted.items(), key=lambda item: item[1].idempotency_key))
        bets = Bet.objects.bulk_create(accepted.values())
        writes.bet_keys_insert(bets)
        ledger_post_many(accounts={account.pk: account for account in accounts.values()},
                         postings=[(bet.account_id, bet.pk, LedgerKind.STAKE, -bet.stake) for bet in bets])
        audit_record_many(actor=client, action=AuditAction.BET_ACCEPTED, changes=[
            (bet, _accepted(round_id, wanted_by_round[round_id][index], bet))
            for (round_id, index), bet in accepted.items()])
    for (round_id, index), bet in accepted.items():
        outcomes[round_id][index] = BetOutcome(bet=bet, created=True)
    for round_id, index, bet_wanted in every:
        if index in outcomes[round_id]:
            continue
        key = bet_wanted.idempotency_key
        original = earlier.get(key) or accepted[first_with_key[key]]
        try:
            outcomes[round_id][index] = BetOutcome(bet=_replayed(original, round_id, bet_wanted))
        except Conflict as conflict:
            outcomes[round_id][index] = BetOutcome(error=conflict)
    return outcomes
