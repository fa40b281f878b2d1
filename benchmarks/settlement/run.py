"""One run of the settlement benchmark: its database, then (a), (b) and (c) on the same data, the
worker's memory at every size, and the report."""

import time
from dataclasses import dataclass

from django.core.management.base import CommandError
from django.db import connection

from benchmarks.database import prepare_database

from . import data, history
from .check import verify
from .floor import measure_floor
from .measurement import Measurement
from .naive import measure_naive
from .report import cpu, ok, report, worker_line
from .worker import measure_worker

EXAMPLE_URL = "DATABASE_URL=postgres://postgres@127.0.0.1:5432/baccarat_bench"


@dataclass(frozen=True)
class Plan:
    bets: int
    bets_per_round: int
    accounts: int
    workers: int
    naive_sample: int
    memory_sizes: list  # bet counts at which the worker's peak memory is measured
    broker: str
    batch_rounds: int
    seed: int
    repeat: int  # each measurement this many times, on fresh data; the best one counts
    side_bets: float  # the share of bets that are side bets
    prefill: int = 0  # settled bets of the past beside the data set (benchmarks.settlement.history)


def run(plan: Plan, *, force: bool, say) -> None:
    check_database(force)
    prepare_database(say)
    shape = data.Shape(plan.bets_per_round, plan.accounts, plan.seed, data.bench_client(), plan.side_bets)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0]
    say(f"bench_settlement: {plan.bets} bets ({plan.side_bets:.0%} side bets), {plan.bets_per_round} per round, "
        f"{plan.accounts} accounts; PostgreSQL {version}, database {connection.settings_dict['NAME']}; "
        f"worker batches of {plan.batch_rounds} rounds")

    first = data.build(plan.bets, shape, say)
    say(f"data set: {first.bets} bets ({first.side_bets} side bets) in {first.rounds} rounds, "
        f"{first.accounts} accounts, staked {first.staked}, to pay {first.to_pay} on {first.paid_bets} bets")
    if plan.prefill:
        built = data.rows_digest()
        history.write(plan.prefill, say)
        # Settled once untimed, so that every measurement, the first too, starts from a data set
        # settled and undone (its pages as the undo leaves them), not the first from a fresh build.
        measure_floor(plan.bets)

    def fresh() -> None:
        """The data set as first built, before each measurement (beside the history, undone in place)."""
        if plan.prefill:
            history.fresh(built)
        else:
            data.same(first, data.build(plan.bets, shape, say))

    floors, naives, runs = [], [], {}
    # (a), (b) and (c) in turn, repeat times: a busy spell on the machine then hits all three.
    for repeat in range(plan.repeat):
        if repeat or plan.prefill:
            fresh()
        floor = measure_floor(plan.bets)
        floor.problems = verify(expect_all=True, data=first)
        floors.append(floor)
        say(f"(a) floor: {plan.bets} bets in {floor.seconds:.3f} s{cpu(floor)}; check: {ok(floor.problems)}")

        fresh()
        naive = measure_naive(plan.naive_sample, plan.bets_per_round)
        naive.problems = verify(expect_all=False, data=first)
        naives.append(naive)
        say(f"(b) naive: {naive.bets} bets in {naive.seconds:.3f} s{cpu(naive)}; check: {ok(naive.problems)}")

        fresh()
        runs.setdefault(plan.bets, []).append(_worker_checked(plan, plan.bets, first, say))
    if plan.prefill:
        say(f"(measured beside {history.size():,} settled bets of history, as the database holds them)")
    # At the other sizes, on data of their own: without the history, which their builds wipe.
    for size in plan.memory_sizes:
        if size != plan.bets:
            runs.setdefault(size, []).append(_worker_checked(plan, size, data.build(size, shape, say), say))

    report(first, floors, naives, runs, plan.memory_sizes, say, history=plan.prefill)
    say(f"(total run time {time.perf_counter() - started:.0f} s)")
    if any(run.problems for size_runs in runs.values() for run in size_runs):
        raise CommandError("exactly once: FAILED (see above)")


def _worker_checked(plan: Plan, size: int, dataset: data.DataSet, say) -> Measurement:
    measurement = measure_worker(size, broker=plan.broker, workers=plan.workers, batch_rounds=plan.batch_rounds)
    measurement.problems += verify(expect_all=True, data=dataset)
    say(worker_line(measurement))
    return measurement


def check_database(force: bool) -> None:
    """A database meant to be wiped: its name ends in "bench" (or --force)."""
    name = connection.settings_dict["NAME"] or ""
    if not name.endswith("bench") and not force:
        raise CommandError(
            f"bench_settlement wipes the database it runs on, and {name!r} does not end in 'bench'. "
            f"Use a database of its own, e.g. {EXAMPLE_URL} "
            "(created and migrated on the first run), or pass --force to wipe this one."
        )
