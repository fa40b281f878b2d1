"""bench_intake's pooled figures: the same single and bulk bets through a PgBouncer in transaction mode
(Debian's pgbouncer, dbutils.pgbouncer), served by a gunicorn of their own set as production behind
a pooler (DATABASE_POOLER=transaction, the token rows' notices on a direct DATABASE_LISTEN_URL), and
measured in turn with the direct phases of the same run. In the CPU report PgBouncer's own CPU is
under "other"."""

from contextlib import contextmanager

from benchmarks.pages.server import gunicorn
from dbutils import pgbouncer
from dbutils.postgresql import urls as database_urls

POOL_SIZE = 20  # server connections PgBouncer opens to the database, whatever the clients


def labels(bulk_size: int) -> dict:
    return {"single_pooled": "single bets, the same, through PgBouncer",
            "bulk_pooled": f"bulk bets, {bulk_size} a request, through PgBouncer"}


def phases(port: int | None, traffic, rounds: dict, bulk_size: int) -> tuple[list, dict]:
    """(the pooled phases, {phase: port}); none without a pooled server."""
    if port is None:
        return [], {}
    return ([("single_pooled", traffic.single(rounds["single"]), {201}, 1),
             ("bulk_pooled", traffic.bulk(rounds["bulk"], bulk_size), {200}, bulk_size)],
            {"single_pooled": port, "bulk_pooled": port})


@contextmanager
def pooled_gunicorn(params: dict, workers: int, server_env: dict, say):
    """The port of a gunicorn whose database connections go through a PgBouncer of its own; None
    (and the pooled phases skipped) when pgbouncer is not installed."""
    if pgbouncer.binary() is None:
        say("  pgbouncer is not installed (apt-get install pgbouncer): no pooled figures")
        yield None
        return
    bouncer = pgbouncer.PgBouncer(params, pool_size=POOL_SIZE,
                                  passwords={params.get("USER") or "": params.get("PASSWORD") or ""}).start()
    try:
        env = {**server_env, "DATABASE_POOLER": "transaction", "DATABASE_LISTEN_URL": database_urls.to_url(params)}
        with gunicorn(bouncer.url(params), workers, env) as port:
            yield port
    finally:
        bouncer.stop()
