"""The figures of one run, each beside its floor, and the ratios against the issue's targets."""

from dataclasses import dataclass, field
from statistics import median

from benchmarks.pages.report import percentile

from .client import Phase
from .cpu import PARTS, per_request

# (label, what over what, the least or most it may be)
TARGETS = {
    "single": ("single bets / framework floor", 0.30, "min"),
    "one_round": ("one round / many rounds", 0.80, "min"),
    "bulk": ("bulk bets / SQL floor", 0.50, "min"),
    "p99": ("single-bet p99 (ms)", 100.0, "max"),
    "lag": ("settlement lag p99 (s)", 2.0, "max"),
    "metrics": ("metrics' cost on single bets (%)", 3.0, "max"),
    "prefilled": ("single / floor, history / empty tables", 0.90, "min"),
}


@dataclass
class Results:
    phases: dict = field(default_factory=dict)  # label → (Phase, bets per request or 0)
    sql_floor: float = 0.0
    lag: dict = field(default_factory=dict)
    waits: dict = field(default_factory=dict)  # phase → {where the database's connections were: share}
    cpu: dict = field(default_factory=dict)  # phase → {part: clock ticks used} (benchmarks.intake.cpu)
    turns: list = field(default_factory=list)  # per turn, {phase: requests per second of its slice}
    empty: list = field(default_factory=list)  # with --prefill: single / floor per turn before it
    problems: list = field(default_factory=list)


def _row(label: str, phase: Phase, bets_per_request: int) -> str:
    if not phase.latencies:
        return f"{label:<44} {'-':>8} {'-':>8} {'-':>8} {'-':>8}  failed: {phase.unexpected}"
    bets = f"{phase.per_second * bets_per_request:8.0f}" if bets_per_request else f"{'-':>8}"
    unexpected = f"  unexpected statuses {phase.unexpected}" if phase.unexpected else ""
    return (f"{label:<44} {phase.per_second:8.0f} {bets} {percentile(phase.latencies, 0.5):8.1f} "
            f"{percentile(phase.latencies, 0.99):8.1f}{unexpected}")


def ratios(results: Results) -> dict:
    phases = results.phases
    figures = {}
    floor, single = phases.get("floor"), phases.get("single")
    if floor and single and floor[0].per_second:
        figures["single"] = single[0].per_second / floor[0].per_second
        figures["p99"] = percentile(single[0].latencies, 0.99) if single[0].latencies else float("inf")
    if single and "one_round" in phases and single[0].per_second:
        figures["one_round"] = phases["one_round"][0].per_second / single[0].per_second
    if "bulk" in phases and results.sql_floor:
        bulk, size = phases["bulk"]
        figures["bulk"] = bulk.per_second * size / results.sql_floor
    by_turn = turn_ratios(results.turns, "single", "floor")
    if results.empty and by_turn:
        # Medians: one slow turn of a noisy machine moves a mean, not the median.
        figures["prefilled"] = median(by_turn) / median(results.empty)
    if results.lag.get("lags"):
        figures["lag"] = percentile(results.lag["lags"], 0.99)
    metrics_on, metrics_off = phases.get("single_metrics_on"), phases.get("single_metrics_off")
    if metrics_on and metrics_off and metrics_off[0].per_second:
        figures["metrics"] = 100 * (1 - metrics_on[0].per_second / metrics_off[0].per_second)
    return figures


def turn_ratios(turns: list, over: str, under: str) -> list:
    """``over`` / ``under`` of each turn's slices (taken seconds apart), in turn order."""
    return [turn[over] / turn[under] for turn in turns if turn.get(over) and turn.get(under)]


def report(results: Results, labels: dict, write) -> None:
    write(f"{'phase':<44} {'req/s':>8} {'bets/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for key, (phase, size) in results.phases.items():
        write(_row(labels[key], phase, size))
    write(f"{labels['sql']:<44} {results.sql_floor:8.0f} {results.sql_floor:8.0f}   (transactions/s, pgbench)")
    busiest = max(results.phases.values(), key=lambda entry: entry[0].client_cpu_seconds / entry[0].seconds)[0]
    write(f"client CPU: at most {100 * busiest.client_cpu_seconds / busiest.seconds:.0f} % of one core "
          "(the load generator is not the limit while this stays well under 100 %)")
    write("")
    write("where the database's connections were (sampled every 20 ms):")
    for key in ("single", "one_round", "bulk"):
        shares = results.waits.get(key)
        if shares:
            write(f"  {labels[key]}: " + ", ".join(f"{state} {100 * share:.0f} %" for state, share in shares.items()
                                                if share >= 0.01))
    _cpu_report(results, labels, write)
    lag = results.lag
    if lag:
        write("")
        write(f"dealing under load: single bets at {lag['rate']:.0f}/s (80 % of their maximum) for "
              f"{lag['seconds']:.0f} s over {lag['rounds']} rounds while rounds are dealt")
        bets = lag["bets"]
        if bets.latencies:
            write(f"  bets: {bets.per_second:.0f}/s accepted, p50 {percentile(bets.latencies, 0.5):.1f} ms, "
                  f"p99 {percentile(bets.latencies, 0.99):.1f} ms; refused after their round was dealt: "
                  f"{lag['refused']}; unexpected {bets.unexpected or 'none'}")
        write(f"  a round with {lag['big_bets']:,} bets: deal request {lag['big_deal_ms']:.0f} ms, "
              f"settled {lag['big_lag']:.2f} s after its deal")
        if lag["lags"]:
            write(f"  {len(lag['lags'])} rounds dealt: settlement lag p50 {percentile(lag['lags'], 0.5):.2f} s, "
                  f"p99 {percentile(lag['lags'], 0.99):.2f} s, max {max(lag['lags']):.2f} s; deal request p99 "
                  f"{percentile(lag['deal_ms'], 0.99):.0f} ms")
    write("")
    write("ratios against the targets:")
    figures = ratios(results)
    for key, (label, bound, kind) in TARGETS.items():
        if key not in figures:
            continue
        value = figures[key]
        met = value >= bound if kind == "min" else value < bound
        write(f"  {label:<36} {value:8.2f}   target {'≥' if kind == 'min' else '<'} {bound:g}   "
              f"{'met' if met else 'MISSED'}")
    by_turn = turn_ratios(results.turns, "single", "floor")
    if len(by_turn) > 1:
        # The same code measured minutes apart moves by more than most changes to it: the spread
        # says how far this run's ratio can be trusted.
        write(f"  single / floor turn by turn: {' '.join(f'{ratio:.2f}' for ratio in by_turn)} "
              f"(spread {min(by_turn):.2f} to {max(by_turn):.2f})")
    if results.empty and by_turn:
        write(f"  single / floor on the empty tables, turn by turn: {' '.join(f'{r:.2f}' for r in results.empty)} "
              f"(median {median(results.empty):.2f}; with the history {median(by_turn):.2f})")
    by_turn = [100 * (1 - ratio) for ratio in turn_ratios(results.turns, "single_metrics_on", "single_metrics_off")]
    if len(by_turn) > 1:
        write(f"  metrics' cost turn by turn (%): {' '.join(f'{cost:.1f}' for cost in by_turn)}")
    write("")
    write("exactly once: ledger equals balances for every account" if not results.problems
          else f"PROBLEMS: {'; '.join(results.problems)}")


def _cpu_report(results: Results, labels: dict, write) -> None:
    """CPU per request by part, and what a single bet costs in all against a 404: while the machine
    has no idle left, their throughputs stand in the inverse ratio of those totals."""
    figures = {key: per_request(results.cpu.get(key, {}), phase.requests)
               for key, (phase, _size) in results.phases.items()}
    figures = {key: found for key, found in figures.items() if found}
    if not figures:
        return
    write("")
    write("CPU per request in ms, from /proc (server: the bench's gunicorn; database: the PostgreSQL server; "
          "client: the load generator; other: the rest of the machine):")
    write(f"  {'phase':<44} " + " ".join(f"{part:>8}" for part in PARTS) + f" {'all':>8} {'idle':>6}")
    for key, found in figures.items():
        write(f"  {labels[key]:<44} " + " ".join(f"{found[part]:8.2f}" for part in PARTS)
              + f" {found['all']:8.2f} {100 * found['idle']:5.0f} %")
    if "floor" in figures and "single" in figures:
        floor, single = figures["floor"]["all"], figures["single"]["all"]
        write(f"  a single bet costs {single / floor:.1f} times a 404's CPU in all; single / floor = "
              f"{TARGETS['single'][1]:g} needs at most {floor / TARGETS['single'][1]:.2f} ms a bet")
    if "single_metrics_on" in figures and "single_metrics_off" in figures:
        on, off = figures["single_metrics_on"], figures["single_metrics_off"]
        write(f"  the metrics cost a single bet {on['server'] - off['server']:+.3f} ms of gunicorn's CPU, "
              f"{100 * (on['all'] - off['all']) / off['all']:+.1f} % of its CPU in all")
