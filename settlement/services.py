"""The settlement of dealt rounds in batches, exactly once, by any number of workers at once."""

import logging
import os
import re
import socket
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.contrib.postgres.aggregates import ArrayAgg
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Min
from django.db.models.functions import Now
from django.utils import timezone

from audit.choices import AuditAction
from audit.services import audit_record
from audit.validators import required_reason
from core.currencies import amount_text, minor_unit
from core.errors import Conflict
from games import locks
from games.choices import STATUS_BY_SETTLEMENT_KIND, BetStatus, RoundStatus
from games.engine import bet_settlement, result_from_labels, round_events
from games.models import Bet, Round
from settlement import aggregates, selectors, writes
from settlement.models import SettlementBatch
from settlement.signals import batch_failed, held_bet_settled, rounds_settled, sweep_requested

logger = logging.getLogger(__name__)

HOLD_REASON_LENGTH = 500
_SEED_LIKE = re.compile(r"[0-9A-Fa-f]{64}")


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class SweepResult:
    batches: int = 0
    settled_rounds: int = 0
    failed_batches: int = 0


def settlement_sweep(*, round_ids=None, worker: str | None = None) -> SweepResult:
    """Settle DEALT rounds batch after batch until none is left; safe to run anywhere, any time.

    A batch that fails is recorded as failed and its rounds are counted as failed attempts; when
    it held several rounds, each is then tried alone, so one bad round fails alone and the rest
    settle. A round that fails alone is then settled bet by bet (``round_settle_bet_by_bet``): a bet
    whose writes fail is HELD for an operator and the others are paid. Only when that fails too is
    the round's failure recorded; a round that failed ``settings.MAX_SETTLEMENT_FAILURES`` times is
    left to an operator. Errors of the database connection itself are raised after recording, so
    the task retries.
    """
    worker = worker or worker_name()
    result = SweepResult()
    while _sweep_batch(round_ids, worker, result, split=True):
        pass
    return result


def _sweep_batch(round_ids, worker: str, result: SweepResult, *, split: bool) -> bool:
    """One batch of the sweep, and its failure handled; whether the sweep goes on (a batch settled,
    or one failed in a sweep of every round). ``split``: a failed batch of several rounds is tried
    again round by round."""
    claimed: list = []
    try:
        batch = settlement_run(round_ids=round_ids, worker=worker, claimed=claimed)
    except Exception as error:  # noqa: BLE001 - every failure is recorded, then handled below
        if len(claimed) == 1 and not _connection_error(error):
            _settle_bet_by_bet(claimed[0], error, worker, result)
        else:
            _failed(claimed, error, worker, result)
            for round_id in claimed if split else ():
                _sweep_batch([round_id], worker, result, split=False)
        return round_ids is None
    _counted(batch, result)
    return batch is not None


def _connection_error(error: Exception) -> bool:
    return isinstance(error, (OperationalError, InterfaceError))


def _counted(batch, result: SweepResult) -> None:
    """A batch committed: counted, and its log line (with the request that dealt its round when the
    task carried it, audit.task_context)."""
    if batch is not None:
        result.settled_rounds += batch.rounds
        result.batches += 1
        one_round = {"round": batch.round_ids[0]} if batch.rounds == 1 else {}
        logger.info("settled %s round(s), %s bet(s) in batch %s: %s", batch.rounds, batch.bets, batch.pk,
                    "; ".join(f"{currency} staked {sums['staked']}, paid {sums['paid']}"
                              for currency, sums in batch.totals.items()) or "no bets",
                    extra={"batch": batch.pk, **one_round})


def _failed(round_ids: list, error: Exception, worker: str, result: SweepResult) -> None:
    """Record the failure; an error of the connection itself is raised again, so the task retries."""
    _record_failure(round_ids, error, worker)
    if _connection_error(error):
        raise error
    result.failed_batches += 1


def _settle_bet_by_bet(round_id: int, cause: Exception, worker: str, result: SweepResult) -> None:
    """The round failed alone: settle it bet by bet; if even that fails, record today's failure."""
    try:
        batch = round_settle_bet_by_bet(round_id=round_id, worker=worker, cause=cause)
    except Exception as error:  # noqa: BLE001
        _failed([round_id], error, worker, result)
        return
    _counted(batch, result)


def _record_failure(round_ids: list, error: Exception, worker: str) -> None:
    """In a transaction of its own (the batch's was rolled back): a failed batch, for operators."""
    if not round_ids:
        return
    if not connection.is_usable():
        connection.close()  # the next query reconnects
    try:
        with transaction.atomic():
            now = timezone.now()
            SettlementBatch.objects.create(
                worker=worker, started_at=now, finished_at=now, rounds=len(round_ids), round_ids=sorted(round_ids),
                outcome=SettlementBatch.Outcome.FAILED, error=f"{type(error).__name__}: {error}"[:2000],
            )
            Round.objects.filter(pk__in=round_ids).update(settlement_failures=F("settlement_failures") + 1)
    except (OperationalError, InterfaceError):
        logger.exception("could not record the failed settlement batch of rounds %s", round_ids)
    batch_failed.send(sender=SettlementBatch, round_ids=round_ids)


@dataclass
class _Settled:
    """What settling some bets came to: the bets settled, their stakes and payouts, and the bets
    whose writes failed (bet id: why), left as they were."""
    bets: int = 0
    staked: Decimal = Decimal(0)
    paid: Decimal = Decimal(0)
    held: dict = field(default_factory=dict)
    by_currency: dict = field(default_factory=dict)  # {currency: [bets, staked, paid]}

    def add(self, currency: str, stake: Decimal, returned: Decimal) -> None:
        self.bets += 1
        self.staked += stake
        self.paid += returned
        totals = self.by_currency.setdefault(currency, [0, Decimal(0), Decimal(0)])
        totals[0] += 1
        totals[1] += stake
        totals[2] += returned

    def batch_totals(self) -> dict:
        """The batch's columns: each currency's totals, and the plain sums only for one currency."""
        totals = {currency: {"bets": bets, "staked": amount_text(staked, currency), "paid": amount_text(paid, currency)}
                  for currency, (bets, staked, paid) in sorted(self.by_currency.items())}
        one = len(totals) <= 1
        return {"totals": totals, "total_staked": self.staked if one else None,
                "total_paid": self.paid if one else None}


def _settle_bets(bets: list, outcome_by_round: dict, balances: dict, *, at, one_by_one: bool,
                 from_status: str = BetStatus.PENDING) -> _Settled:
    """The settlement loop, written once: every bet [(id, round id, account id, bet type, stake,
    multiplier, paytable)] on its round's event for its bet type (the registry's rule on the dealt
    cards), at its own terms (a main bet's multiplier, a side bet's paytable: those in force when it
    was accepted), rounded down to the minor unit of its game's currency, paid on ``balances``
    {account id: balance} of accounts the caller holds locked.

    Together, the writes of all the bets are set-based: a handful of statements. ``one_by_one``,
    each bet's writes run in a savepoint of their own: a bet whose writes fail is rolled back to it
    and left as it was, its reason in ``held``; the others are written exactly as together.
    """
    result = _Settled()
    settled, payouts = [], []  # (bet id, status, payout); (account id, bet id, amount, balance after)
    dealt = _dealt_rounds(outcome_by_round)
    for bet_id, round_id, account_id, bet_type, stake, multiplier, paytable in bets:
        events, unit, currency = dealt[round_id]
        settled_as, returned = bet_settlement(bet_type, stake, multiplier, paytable, events[bet_type], unit)
        bet = (bet_id, STATUS_BY_SETTLEMENT_KIND[settled_as], returned)
        payout = [(account_id, bet_id, returned, balances[account_id] + returned)] if returned else []
        if one_by_one:
            try:
                with transaction.atomic():
                    _write([bet], payout, at=at, from_status=from_status)
            except Exception as error:  # noqa: BLE001 - the bet is held with the error as its reason
                if _connection_error(error):
                    raise  # no savepoint survives a lost connection
                result.held[bet_id] = hold_reason(error)
                continue
        else:
            settled.append(bet)
            payouts += payout
        balances[account_id] += returned
        result.add(currency, stake, returned)
    if not one_by_one:
        _write(settled, payouts, at=at, from_status=from_status)
    return result


def _dealt_rounds(round_ids) -> dict:
    """{round id: (every bet type's event on its cards, the minor unit of its game's currency, that
    currency)}."""
    rounds = Round.objects.filter(pk__in=list(round_ids)).values_list(
        "pk", "cards", "player_cards", "banker_cards", "game__currency")
    return {round_id: (round_events(result_from_labels(cards, player, banker)), minor_unit(currency), currency)
            for round_id, cards, player, banker, currency in rounds}


def _write(settled: list, payouts: list, *, at, from_status: str) -> None:
    writes.settle_bets(settled, settled_at=at, from_status=from_status)
    writes.post_payouts(payouts, created_at=at)
    writes.set_balances({account_id: balance for account_id, _bet, _amount, balance in payouts})


@transaction.atomic
def settlement_run(*, round_ids=None, limit: int | None = None, worker: str | None = None,
                   claimed: list | None = None):
    """Settle up to ``limit`` DEALT rounds in one transaction; None when there is nothing to claim.

    Rounds are claimed with row locks that skip rounds another worker holds, so any number of
    workers (and sweeps) can run at once: a bet's status only changes under its round's lock, the
    bet update only touches PENDING bets, and the ledger's effects (LedgerEffect) stop any payout from
    being written twice. The writes are set-based: a handful of statements per batch.
    """
    return _settle_rounds(round_ids, limit or settings.SETTLEMENT_BATCH_ROUNDS, worker=worker, claimed=claimed)


def hold_reason(error: Exception) -> str:
    """Why a bet's writes failed, for operators: the error's class and first line, trimmed. Anything
    that looks like a seed (64 hex digits) is blanked out, whatever the database put in its message."""
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    text = _SEED_LIKE.sub("[…]", f"{type(error).__name__}: {message}".rstrip(": "))
    return text[:HOLD_REASON_LENGTH]


@transaction.atomic
def round_settle_bet_by_bet(*, round_id: int, worker: str | None = None, cause: Exception | None = None):
    """Settle one DEALT round bet by bet in one transaction; None when it is no longer DEALT.

    For a round that already failed settlement alone. Each bet's writes run in a savepoint: a bet
    whose writes fail is rolled back to it and HELD (its reason and time recorded), the others are
    settled and paid exactly as a batch would (the same writes, ledger entries and aggregates),
    and the round is SETTLED: its outcome is final and a held bet is an open item for an operator
    (``held_bet_settle``), not a reason to hold the other players' money.
    """
    note = f"Settled bet by bet after: {hold_reason(cause)}" if cause is not None else "Settled bet by bet."
    return _settle_rounds([round_id], 1, worker=worker, bet_by_bet=note)


def _settle_rounds(round_ids, limit: int, *, worker: str | None, claimed: list | None = None,
                   bet_by_bet: str | None = None):
    """Claim and settle up to ``limit`` DEALT rounds (of ``round_ids`` when given), in the caller's
    transaction; None when there is nothing to claim. ``bet_by_bet``: the batch's note, and each
    bet's writes in a savepoint of their own, a bet whose writes fail HELD."""
    worker = worker or worker_name()
    outcome_by_round = dict(locks.lock_dealt_rounds(round_ids, limit, settings.MAX_SETTLEMENT_FAILURES))
    if claimed is not None:
        claimed.extend(outcome_by_round)
    if not outcome_by_round:
        return None
    started = timezone.now()
    # The bets' months since the first round opened: the other partitions are pruned. Both clocks
    # (a bet's id carries the database's month, opened_at is the application's). And the shoes the
    # rounds dealt from, whose odds the aggregates weigh their bets by.
    times = Round.objects.filter(pk__in=outcome_by_round).aggregate(
        first=Min("opened_at"), now=Min(Now()), shoes=ArrayAgg("decks", distinct=True, order_by="decks"))
    bets = selectors.pending_bets_of(outcome_by_round, since=min(times["first"], times["now"]),
                                     until=max(started, times["now"]))
    balances = locks.lock_account_balances({bet[2] for bet in bets})
    with writes.plans_for_arrays(len(bets)):
        return _settle_claimed(bets, outcome_by_round, balances, started=started, shoes=times["shoes"],
                               worker=worker, bet_by_bet=bet_by_bet)


def _settle_claimed(bets: list, outcome_by_round: dict, balances: dict, *, started, shoes: list, worker: str,
                    bet_by_bet: str | None):
    """Settle the claimed rounds' bets on the locked balances: the bets, ledger, rounds, batch,
    audit events and aggregates of the batch."""
    settled = _settle_bets(bets, outcome_by_round, balances, at=started, one_by_one=bet_by_bet is not None)
    held_by_round: dict = {}
    for bet_id, round_id, *_rest in bets:
        if bet_id in settled.held:
            held_by_round.setdefault(round_id, {})[str(bet_id)] = settled.held[bet_id]
            Bet.objects.filter(pk=bet_id, status=BetStatus.PENDING).update(
                status=BetStatus.HELD, hold_reason=settled.held[bet_id], held_at=started)
    Round.objects.filter(pk__in=outcome_by_round).update(status=RoundStatus.SETTLED, settled_at=started)
    note = bet_by_bet or ""
    if settled.held:
        note += f" Held bets: {', '.join(map(str, settled.held))}."
    batch = SettlementBatch.objects.create(
        worker=worker, started_at=started, finished_at=timezone.now(), rounds=len(outcome_by_round),
        bets=settled.bets, **settled.batch_totals(), round_ids=sorted(outcome_by_round),
        outcome=SettlementBatch.Outcome.OK, error=note,
    )
    actor = f"system:{worker}"
    after = {"rounds": batch.round_ids, "bets": settled.bets, "totals": batch.totals}
    if batch.total_staked is not None:
        after |= {"total_staked": amount_text(settled.staked), "total_paid": amount_text(settled.paid)}
    if bet_by_bet is not None:
        after |= {"bet_by_bet": True, "held_bets": list(settled.held)}
    audit_record(actor=actor, action=AuditAction.ROUNDS_SETTLED, obj=batch, after=after)
    for round_id, held in held_by_round.items():
        audit_record(actor=actor, action=AuditAction.BETS_HELD, object_type="round", object_id=str(round_id),
                     after={"round": round_id, "held": held})
    rounds_settled.send(sender=SettlementBatch, round_ids=batch.round_ids)
    # Last: every batch of a game and day adds to the same aggregate rows, and holds them until it
    # commits, so it takes them only when nothing is left to do but commit. Held bets count nowhere
    # until resolved.
    aggregates.record_settled_rounds(outcome_by_round, shoes=shoes)
    return batch


def held_bet_settle(*, bet_id: int, actor, reason: str) -> Bet:
    """An operator settles a HELD bet on its round's cards, at its own terms; paid once.

    Bet.DoesNotExist when there is no such bet; a Conflict (409) when it is not HELD (someone settled
    it first: the round's row lock orders two operators, and the ledger's effects (LedgerEffect) stand
    behind it), or when its writes fail again: it then stays HELD with the new reason, recorded.
    """
    reason = required_reason(reason)
    failure = _held_bet_try(bet_id=bet_id, actor=actor, reason=reason)
    if isinstance(failure, str):
        raise Conflict("status", f"Bet {bet_id} is still held: {failure}", code="held")
    return failure


@transaction.atomic
def _held_bet_try(*, bet_id: int, actor, reason: str):
    """The settled bet, or the reason its writes failed again (committed with the bet still HELD)."""
    round_id, account_id = Bet.objects.filter(pk=bet_id).values_list("round_id", "account_id").get()
    round_ = locks.lock_round(round_id)  # a bet's status changes only under its round's lock
    balance = locks.lock_account_balances([account_id])[account_id]
    bet = Bet.objects.get(pk=bet_id)
    if bet.status != BetStatus.HELD:
        raise Conflict("status", f"Bet {bet_id} is {bet.get_status_display().lower()}, not held.", code="not_held")
    settled = _settle_bets([(bet_id, round_id, account_id, bet.bet_type, bet.stake, bet.multiplier, bet.paytable)],
                           {round_id: round_.outcome}, {account_id: balance}, at=timezone.now(), one_by_one=True,
                           from_status=BetStatus.HELD)
    if settled.held:  # the bet stays held, with the new reason
        failure = settled.held[bet_id]
        Bet.objects.filter(pk=bet_id).update(hold_reason=failure)
        audit_record(actor=actor, action=AuditAction.BETS_HELD, obj=bet, reason=reason,
                     before={"hold_reason": bet.hold_reason}, after={"round": round_id, "hold_reason": failure})
        return failure
    bet.refresh_from_db()
    audit_record(actor=actor, action=AuditAction.HELD_BET_SETTLED, obj=bet, reason=reason,
                 before={"status": BetStatus.HELD, "hold_reason": bet.hold_reason},
                 after={"status": bet.status, "payout": amount_text(bet.payout, bet.account.currency),
                        "round": round_id,
                        "outcome": round_.outcome})
    held_bet_settled.send(sender=Bet, bet=bet)
    aggregates.record_resolved_bets([bet_id])  # last, as a batch's: counted now, as if settled with its round
    return bet


@transaction.atomic
def sweep_request(*, actor) -> None:
    """Ask the workers for a sweep now (an operator's button, the API); it runs once committed."""
    audit_record(actor=actor, action=AuditAction.SWEEP_REQUESTED, object_type="settlement", object_id="queue")
    transaction.on_commit(lambda: sweep_requested.send(sender=SettlementBatch))
