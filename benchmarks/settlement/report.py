"""The printed figures of the settlement benchmark: per measurement, then the table and the targets."""

from .data import DataSet
from .measurement import Measurement

WORKER_TO_FLOOR_TARGET = 0.5
WORKER_TO_NAIVE_TARGET = 20


def ok(problems: list) -> str:
    return "OK" if not problems else "FAILED: " + "; ".join(problems)


def megabytes(kb: int) -> str:
    return f"{kb / 1024:.1f} MB"


def cpu(measurement: Measurement) -> str:
    if measurement.cpu_seconds is None:
        return ""
    return f" ({measurement.cpu_seconds:.3f} CPU s)"


def worker_line(run: Measurement) -> str:
    vacuum = f"; autovacuum meanwhile on {', '.join(run.autovacuum)}" if run.autovacuum else ""
    return (f"(c) worker: {run.bets} bets in {run.seconds:.3f} s{cpu(run)}, {run.batches} batches "
            f"(largest {run.largest_batch} bets, {run.in_batch_seconds:.3f} s inside batches); "
            f"peak memory {megabytes(max(run.peak_kb))}{vacuum}; check: {ok(run.problems)}")


def _best(results: list) -> Measurement:
    return max(results, key=lambda result: result.rate)


def _best_cpu(results: list) -> float | None:
    rates = [result.cpu_rate for result in results if result.cpu_rate]
    return max(rates) if rates else None


def _all_of(results: list) -> str:
    if len(results) < 2:
        return ""
    return "(best of " + ", ".join(f"{result.rate:,.0f}" for result in results) + ")"


def report(data: DataSet, floors: list, naives: list, runs: dict, memory_sizes: list, say, *, history: int = 0) -> None:
    """The best of each measurement side by side, the ratios against their targets, the worker's
    memory at every size, and the checks. ``runs`` maps a bet count to the worker runs at it."""
    bets = data.bets
    floor, naive, worker = _best(floors), _best(naives), _best(runs[bets])
    workers = f"{worker.workers} worker{'s' if worker.workers > 1 else ''}"
    rows = [
        ("(a) floor: one SQL statement", floor, _best_cpu(floors), _all_of(floors)),
        ("(b) naive ORM loop", naive, _best_cpu(naives),
         f"measured on a sample of {naive.bets} bets {_all_of(naives)}"),
        (f"(c) worker path ({workers}, Celery)", worker, _best_cpu(runs[bets]),
         f"send to done, through the broker {_all_of(runs[bets])}"),
    ]
    say("")
    say(f"{'':38} {'bets':>8} {'seconds':>8} {'bets/s':>8}   {'bets per CPU s':>14}")
    for label, result, cpu_rate, note in rows:
        cpu_column = f"{cpu_rate:>14,.0f}" if cpu_rate else f"{'-':>14}"
        say(f"{label:38} {result.bets:>8} {result.seconds:>8.3f} {result.rate:>8,.0f}   {cpu_column}  {note}".rstrip())
    to_floor = worker.rate / floor.rate
    to_naive = worker.rate / naive.rate
    say("")
    say(f"worker / floor: {to_floor:.2f}   (target >= {WORKER_TO_FLOOR_TARGET:.2f}: "
        f"{'met' if to_floor >= WORKER_TO_FLOOR_TARGET else 'NOT met'})")
    say(f"worker / naive: {to_naive:.1f}x   (target >= {WORKER_TO_NAIVE_TARGET}x: "
        f"{'met' if to_naive >= WORKER_TO_NAIVE_TARGET else 'NOT met'})")
    cpu_floor, cpu_naive, cpu_worker = _best_cpu(floors), _best_cpu(naives), _best_cpu(runs[bets])
    if cpu_floor and cpu_naive and cpu_worker:
        say(f"by CPU (the Python process and its database backend; other load disturbs it less): "
            f"worker / floor {cpu_worker / cpu_floor:.2f}, worker / naive {cpu_worker / cpu_naive:.1f}x")
    if len(floors) > 1:
        say(f"(each figure the best of {len(floors)} runs on fresh copies of the same data)")
    say("")
    say("worker peak memory (VmHWM of the worker process, --pool=solo; idle = after start-up):")
    for size in memory_sizes:
        size_runs = runs[size]
        idle = max(max(run.idle_kb) for run in size_runs)
        peak = max(max(run.peak_kb) for run in size_runs)
        largest = max(run.largest_batch for run in size_runs)
        beside = f" (beside {history:,} bets of history)" if history and size == bets else ""
        say(f"  {size:>9} bets{beside}: peak {megabytes(peak)} (idle {megabytes(idle)}, +{megabytes(peak - idle)} "
            f"while settling; {size_runs[0].batches} batches, largest {largest} bets)")
    say("")
    floor_problems = [problem for result in floors for problem in result.problems]
    naive_problems = [problem for result in naives for problem in result.problems]
    worker_problems = [problem for size_runs in runs.values() for run in size_runs for problem in run.problems]
    say(f"floor check: {ok(floor_problems)}; naive check: {ok(naive_problems)}")
    say(f"exactly once: {ok(worker_problems)}")
