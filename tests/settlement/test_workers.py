"""Settlement by real Celery worker processes on the real PostgreSQL and Redis, under failure.

Each scenario starts ``celery -A baccarat_site worker`` processes on pytest-django's test database
and on the Redis database of the ``redis_url`` fixture, sends through the project's own Celery app
(pointed at that Redis for the test), makes a failure happen at a known point, and ends with the
same check from the database: every dealt bet settled exactly once at the engine's payout, one
PAYOUT entry per paid bet, no round left DEALT, and every balance equal to its ledger (see
``workers.assert_settled_exactly_once``).

Failures land mid-batch deterministically: the test holds the row lock of an account from a
separate session, so a worker that claimed rounds with bets on that account waits inside
``settlement_run`` (rounds claimed, nothing written) until the test kills it, drops its database
connection, or lets it go; pg_stat_activity shows when it is waiting.
"""

import os
import random
import signal
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
import redis

from games import services as game_services
from games.choices import RoundStatus
from games.models import Bet, Round
from settlement.models import SettlementBatch
from settlement.tasks import settle_rounds, sweep
from tests import app_role
from tests.settlement.workers import (
    RETRIED,
    account_locked,
    assert_settled_exactly_once,
    backend_alive,
    lock_waiters,
    query,
    queue_length,
    wait_for,
)
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry

# Committed data: the workers are other processes. (The flush after each test re-creates the role
# groups through post_migrate.)
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_client(redis_url):
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def make_accounts(funded_account, names, balance="5000.00") -> dict:
    return {name: funded_account(name, balance) for name in names}


def deal_rounds(game, integration, count: int, players, rng: random.Random) -> list:
    """Deal ``count`` rounds, each with a bet from every player ``players(i)`` names; returns their ids.

    Dealing commits and then sends a settle_rounds message, as in production.
    """
    round_ids = []
    for i in range(count):
        round_ = game_services.round_open(game_id=game.pk, actor=integration)
        for j, external_id in enumerate(players(i)):
            game_services.bet_place(
                round_id=round_.pk, account_external_id=external_id,
                bet_type=rng.choice(["PLAYER", "BANKER", "TIE"]), stake=Decimal(rng.randint(100, 2500)) / 100,
                idempotency_key=f"{round_.pk}-{j}", client=integration,
            )
        game_services.round_deal(round_id=round_.pk, actor=integration)
        round_ids.append(round_.pk)
    return round_ids


def returned(results, name=None, task_id=None) -> list:
    return sorted(value for task, tid, value in results
                  if (name is None or task == name) and (task_id is None or tid == task_id))


def test_worker_killed_mid_batch_then_another_worker_and_a_sweep(broker, workers, redis_client, game, integration,
                                                                funded_account):
    accounts = make_accounts(funded_account, ["a", "b", "c"])
    rounds = deal_rounds(game, integration, 4, lambda i: ["a", "b", "c"], random.Random(1))
    assert queue_length(redis_client) == 4  # one settle_rounds message per dealt round, sent on commit

    with account_locked(accounts["a"].pk):
        [w1] = workers.start(1)
        [(pid, _name, sql)] = wait_for(lambda: lock_waiters(w1.application_name), 20,
                                       "w1 to wait for the account lock")
        assert "settlement_account" in sql and "FOR UPDATE" in sql
        # The worker logs in as the application role, as in production (tests/app_role.py).
        assert query("SELECT usename FROM pg_stat_activity WHERE pid = %s", [pid]) == [(app_role.APP_ROLE,)]
        # Mid-batch: w1's transaction holds the first round it claimed; the others are free.
        free = {row[0] for row in query("SELECT id FROM games_round WHERE id = ANY(%s) FOR UPDATE SKIP LOCKED",
                                        [rounds])}
        assert free == set(rounds[1:])
        w1.kill(signal.SIGKILL)
        w1.process.wait(timeout=10)
        assert backend_alive(pid)  # the orphaned session still waits, still holding the round
    # The lock is released: the orphaned session finds its client gone and rolls back.
    wait_for(lambda: not backend_alive(pid), 15, "the killed worker's database session to end")
    assert Round.objects.filter(pk__in=rounds, status=RoundStatus.DEALT).count() == 4
    assert not SettlementBatch.objects.exists()
    assert not LedgerEntry.objects.filter(kind=LedgerKind.PAYOUT).exists()
    assert redis_client.hlen("unacked") == 1  # w1's message: acked late, so not lost, only unacked
    assert queue_length(redis_client) == 3  # and w1 had reserved no other

    [w2] = workers.start(1)
    results = workers.wait_for_results(3)  # the three messages w1 never received
    assert returned(results) == [1, 1, 1]
    # The killed worker's round waits for the sweep (Redis would redeliver only after the visibility timeout).
    assert list(Round.objects.filter(status=RoundStatus.DEALT).values_list("pk", flat=True)) == [rounds[0]]
    sweep.delay()
    results = workers.wait_for_results(4)
    assert returned(results, "settlement.sweep") == [1]

    settled_by = assert_settled_exactly_once(rounds)
    assert {batch.worker for batch in settled_by.values()} == {w2.hostname}


def test_pool_process_killed_mid_batch_message_requeued_and_redelivered(broker, workers, redis_client, game,
                                                                        integration, funded_account):
    """Only the pool process dies: acks_late + reject_on_worker_lost requeue the message at once."""
    accounts = make_accounts(funded_account, ["a", "b"])
    rounds = deal_rounds(game, integration, 2, lambda i: ["a", "b"], random.Random(2))
    broker.control.purge()
    task = settle_rounds.apply_async(args=[rounds])

    with account_locked(accounts["a"].pk):
        [w1] = workers.start(1)
        [(pid, _name, _sql)] = wait_for(lambda: lock_waiters(w1.application_name), 20,
                                        "w1 to wait for the account lock")
        os.kill(_pool_child_pid(w1), signal.SIGKILL)
        # The main process sees its child lost, rejects the message with requeue, a new child gets it
        # again: the rounds are still claimed by the orphaned session, so it skips them and does nothing.
        results = workers.wait_for_results(1, timeout=30)
        assert results == [("settlement.settle_rounds", task.id, 0)]
        assert "WorkerLostError" in w1.log()
    wait_for(lambda: not backend_alive(pid), 15, "the killed pool process's database session to end")
    assert Round.objects.filter(pk__in=rounds, status=RoundStatus.DEALT).count() == 2
    sweep.delay()
    results = workers.wait_for_results(2)
    assert returned(results, "settlement.sweep") == [2]
    assert_settled_exactly_once(rounds)


def _pool_child_pid(worker) -> int:
    """The pid of the worker's one pool process (--concurrency=1), from /proc."""
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == worker.process.pid:
                children.append(int(entry))
    assert len(children) == 1, children
    return children[0]


def test_same_task_delivered_twice_settles_once(broker, workers, game, integration, funded_account):
    accounts = make_accounts(funded_account, ["a", "b"])
    rounds = deal_rounds(game, integration, 8, lambda i: ["a", "b"], random.Random(3))
    assert broker.control.purge() == 8  # the test delivers, not the deals
    first, second = rounds[:4], rounds[4:]
    workers.start(2)

    # Twice at once: the second delivery arrives while the first is mid-batch on the other worker.
    task_id = str(uuid.uuid4())
    with account_locked(accounts["a"].pk):
        settle_rounds.apply_async(args=[first], task_id=task_id)
        [(_pid, busy, _sql)] = wait_for(lock_waiters, 20, "a worker to wait for the account lock")
        settle_rounds.apply_async(args=[first], task_id=task_id)
        results = workers.wait_for_results(1)
        assert results == [("settlement.settle_rounds", task_id, 0)]  # every round claimed by the first
        answered = next(worker for worker in workers.all if worker.results())
        assert answered.application_name != busy
    results = workers.wait_for_results(2)
    assert returned(results, task_id=task_id) == [0, 4]
    # And once more after it finished, as a redelivery would.
    settle_rounds.apply_async(args=[first], task_id=task_id)
    results = workers.wait_for_results(3)
    assert returned(results, task_id=task_id) == [0, 0, 4]

    # Two copies sent together to two idle workers, with nothing holding them back.
    task_id = str(uuid.uuid4())
    settle_rounds.apply_async(args=[second], task_id=task_id)
    settle_rounds.apply_async(args=[second], task_id=task_id)
    results = workers.wait_for_results(5)
    assert sum(returned(results, task_id=task_id)) == 4

    assert_settled_exactly_once(rounds)
    assert not SettlementBatch.objects.filter(outcome=SettlementBatch.Outcome.FAILED).exists()


def test_four_workers_on_one_backlog(broker, workers, redis_client, game, integration, funded_account):
    players = ["p1", "p2", "p3", "p4", "p5"]
    accounts = make_accounts(funded_account, ["whale", *players])
    rng = random.Random(4)
    rounds = deal_rounds(game, integration, 200, lambda i: ["whale", *rng.sample(players, 2)], rng)
    for _ in range(3):
        sweep.delay()
    assert queue_length(redis_client) == 203
    assert Bet.objects.count() == 600

    # A starting gate: every round has a bet of the whale, so each worker's first batch waits at the
    # whale's account lock until all four hold one; then they go, all on the same backlog.
    with account_locked(accounts["whale"].pk):
        started = workers.start(4, SETTLEMENT_BATCH_ROUNDS="10")
        wait_for(lambda: len({row[1] for row in lock_waiters()}) == 4, 30, "four workers mid-batch")
    wait_for(lambda: not Round.objects.filter(status=RoundStatus.DEALT).exists(), 60,
             "the backlog to be settled")
    results = workers.wait_for_results(203)
    assert len(results) == 203 and sum(returned(results)) == 200

    settled_by = assert_settled_exactly_once(rounds)
    names = {batch.worker for batch in settled_by.values()}
    assert names == {worker.hostname for worker in started}
    assert not SettlementBatch.objects.filter(outcome=SettlementBatch.Outcome.FAILED).exists()


def test_sweeps_racing_workers(broker, workers, redis_client, game, integration, funded_account):
    players = ["p1", "p2", "p3", "p4"]
    make_accounts(funded_account, players)
    rng = random.Random(5)
    for _ in range(2):
        sweep.delay()  # first in the queue: sweeps run while the settle_rounds messages are taken
    rounds = deal_rounds(game, integration, 60, lambda i: rng.sample(players, 2), rng)
    assert queue_length(redis_client) == 62
    workers.start(3, wait=False, SETTLEMENT_BATCH_ROUNDS="4")
    wait_for(lambda: SettlementBatch.objects.exists(), 45, "the first batch")
    for _ in range(4):
        sweep.delay()  # a burst of sweeps while the workers are at it
    # And dealing goes on, each deal's settle_rounds racing the sweeps sent along.
    for _ in range(5):
        rounds += deal_rounds(game, integration, 4, lambda i: rng.sample(players, 2), rng)
        sweep.delay()
        sweep.delay()
    for worker in workers.all:
        wait_for(worker.is_ready, 45, f"{worker.name} to be ready")
    messages = 2 + 60 + 4 + 20 + 10
    results = workers.wait_for_results(messages)
    assert len(results) == messages
    assert sum(returned(results)) == 80  # each round settled by exactly one task
    assert sum(returned(results, "settlement.sweep")) > 0  # the first task taken was a sweep, with rounds to do
    assert queue_length(redis_client) == 0
    wait_for(lambda: redis_client.hlen("unacked") == 0, 10, "every message to be acked")  # acked after the task

    assert_settled_exactly_once(rounds)
    assert not SettlementBatch.objects.filter(outcome=SettlementBatch.Outcome.FAILED).exists()


def test_database_connection_dropped_mid_batch_then_retry(broker, workers, game, integration, funded_account):
    accounts = make_accounts(funded_account, ["a", "b"])
    rounds = deal_rounds(game, integration, 3, lambda i: ["a", "b"], random.Random(6))
    broker.control.purge()
    [w1] = workers.start(1)

    with account_locked(accounts["a"].pk):
        task = settle_rounds.apply_async(args=[rounds])
        [(pid, _name, _sql)] = wait_for(lambda: lock_waiters(w1.application_name), 20,
                                        "w1 to wait for the account lock")
        assert query("SELECT pg_terminate_backend(%s)", [pid]) == [(True,)]
        failed = wait_for(lambda: SettlementBatch.objects.filter(outcome=SettlementBatch.Outcome.FAILED).first(),
                          20, "the failed batch to be recorded")
        assert failed.round_ids == sorted(rounds) and failed.worker == w1.hostname
        assert failed.error.startswith("OperationalError")
        assert set(Round.objects.filter(pk__in=rounds).values_list("settlement_failures", flat=True)) == {1}
        assert Round.objects.filter(pk__in=rounds, status=RoundStatus.DEALT).count() == 3
        # The task retries with backoff, on a new connection, and reaches the same lock again.
        [(retry_pid, _name, _sql)] = wait_for(lambda: lock_waiters(w1.application_name), 20,
                                              "the retry to wait for the account lock")
        assert retry_pid != pid
        [(_name, retried_id, countdown)] = workers.log_lines(RETRIED)
        assert retried_id == task.id and 0 <= int(countdown) <= 2  # backoff 2 s, full jitter, first retry
    results = workers.wait_for_results(1)
    assert results == [("settlement.settle_rounds", task.id, 3)]

    settled_by = assert_settled_exactly_once(rounds)
    assert {batch.pk for batch in settled_by.values()} != {failed.pk}
    assert SettlementBatch.objects.filter(outcome=SettlementBatch.Outcome.FAILED).count() == 1


POISON_UP = """
CREATE FUNCTION test_poison_bet() RETURNS trigger AS $$
BEGIN
    IF OLD.id = {bet_id} THEN RAISE EXCEPTION 'poisoned bet %', OLD.id; END IF;
    RETURN NEW;
END; $$ LANGUAGE plpgsql;
CREATE TRIGGER test_poison_bet BEFORE UPDATE ON games_bet FOR EACH ROW EXECUTE FUNCTION test_poison_bet();
"""
POISON_DOWN = "DROP TRIGGER IF EXISTS test_poison_bet ON games_bet; DROP FUNCTION IF EXISTS test_poison_bet();"


@pytest.fixture
def poison():
    """poison(bet_id): the database refuses to update that bet (a fault in the database, not a mock,
    put there by the tables' owner: the application role may not create triggers)."""

    def install(bet_id: int):
        query(POISON_UP.format(bet_id=int(bet_id)), owner=True)

    yield install
    query(POISON_DOWN, owner=True)


def test_poison_round_is_isolated_and_settles_once_repaired(broker, workers, game, integration, funded_account,
                                                            poison):
    make_accounts(funded_account, ["a", "b"])
    rounds = deal_rounds(game, integration, 5, lambda i: ["a", "b"], random.Random(7))
    broker.control.purge()
    bad_round = rounds[2]
    poison(Bet.objects.filter(round_id=bad_round).order_by("pk").first().pk)
    [w1] = workers.start(1, MAX_SETTLEMENT_FAILURES="3")

    sweep.delay()
    results = workers.wait_for_results(1)
    assert returned(results) == [4]  # the batch failed; each round alone then: four settled, the poisoned one not
    assert list(Round.objects.filter(status=RoundStatus.DEALT).values_list("pk", flat=True)) == [bad_round]
    failed = SettlementBatch.objects.filter(outcome=SettlementBatch.Outcome.FAILED).order_by("pk")
    assert failed[0].round_ids == sorted(rounds)
    assert all(batch.round_ids == [bad_round] for batch in failed[1:])
    assert all("poisoned bet" in batch.error for batch in failed)
    assert Round.objects.get(pk=bad_round).settlement_failures == 3  # tried until the cap, then left alone
    bad_bets = Bet.objects.filter(round_id=bad_round).values("pk")
    assert not LedgerEntry.objects.filter(bet_id__in=bad_bets, kind=LedgerKind.PAYOUT).exists()

    sweep.delay()  # a later sweep leaves the capped round to operators
    results = workers.wait_for_results(2)
    assert returned(results, "settlement.sweep") == [0, 4]
    assert Round.objects.get(pk=bad_round).status == RoundStatus.DEALT

    query(POISON_DOWN, owner=True)  # repaired; an operator settles the round by id
    settle_rounds.delay([bad_round])
    results = workers.wait_for_results(3)
    assert returned(results, "settlement.settle_rounds") == [1]
    assert_settled_exactly_once(rounds)
