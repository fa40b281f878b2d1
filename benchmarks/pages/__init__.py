"""The pages benchmark: p50 and p95 of every back-office page and API list through gunicorn, on a
PostgreSQL database of its own filled with a million bets (see the bench_pages command)."""
