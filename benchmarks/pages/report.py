"""p50 and p95 per page against the target, printed as a table."""

TARGET_P95_MS = 200.0


def percentile(values, fraction: float) -> float:
    """Nearest-rank percentile of the values (fraction in (0, 1])."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


def report(pages: list, times: dict, statuses: dict, write) -> list:
    """Print the table and the verdicts; the labels of the pages that did not answer 200."""
    width = max(len(label) for label, _path, _auth in pages)
    lines = [f"{'page':<{width}}  {'status':>6}  {'p50 ms':>8}  {'p95 ms':>8}  target"]
    slow, failed = [], []
    for label, _path, _auth in pages:
        p50, p95 = percentile(times[label], 0.5), percentile(times[label], 0.95)
        ok = p95 < TARGET_P95_MS
        if statuses[label] != 200:
            failed.append(label)
        elif not ok:
            slow.append(label)
        lines.append(f"{label:<{width}}  {statuses[label]:>6}  {p50:>8.1f}  {p95:>8.1f}  {'ok' if ok else 'SLOW'}")
    write("\n".join(lines))
    every = [value for label in times for value in times[label]]
    write(f"\n{len(pages)} pages, {len(every):,} timed requests; overall p50 "
          f"{percentile(every, 0.5):.1f} ms, p95 {percentile(every, 0.95):.1f} ms.")
    if failed:
        write(f"Not HTTP 200: {', '.join(failed)}")
    if slow:
        write(f"p95 at or over {TARGET_P95_MS:.0f} ms: {', '.join(slow)}")
    else:
        write(f"Every page met the target (p95 under {TARGET_P95_MS:.0f} ms).")
    return failed
