"""The benchmarks, outside the app packages: each measures the product against a floor measured in
the same run. ``engine`` (bench_engine), ``settlement`` (bench_settlement) and ``pages``
(bench_pages) hold the code; the management commands only read their options. ``expected`` is the
expected settlement of a bet in SQL, shared by every statement that settles or checks one."""
