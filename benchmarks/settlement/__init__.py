"""The settlement benchmark: bets settled per second by a real Celery worker, next to the floor of
one set-based SQL statement and a naive row-by-row ORM loop, on the same generated data set."""
