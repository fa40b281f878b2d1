"""bench_intake: bets per second through gunicorn against the floors measured in the same run."""
