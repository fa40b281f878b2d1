"""One run of the pages benchmark: its database (built, or reused), then every page timed."""

import time

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection, connections
from rest_framework.authtoken.models import Token

from settlement import aggregates

from . import database
from .data import ADMIN_USERNAME, DataSize, build, read_state
from .report import report
from .server import get, gunicorn, log_in
from .targets import pages

WARM_UP_REQUESTS = 2


def run(size: DataSize, *, requests: int, workers: int, reuse: bool, drop: bool, say, write) -> None:
    """``say`` tells the progress, ``write`` prints the report."""
    source = dict(settings.DATABASES["default"])
    bench_name = database.bench_database_name(source["NAME"])
    reused = database.prepare(source, bench_name, reuse=reuse)
    database.switch_to(bench_name)
    started = time.perf_counter()
    call_command("migrate", verbosity=0, interactive=False)
    if reused:
        started = time.perf_counter()
        counts = aggregates.rebuild()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        say(f"reusing the data of {bench_name}; aggregates rebuilt in {time.perf_counter() - started:.1f} s ("
            + ", ".join(f"{k} {v:,}" for k, v in counts.items()) + ")")
    else:
        say(f"migrated {bench_name} in {time.perf_counter() - started:.1f} s")
        build(size, say)
    try:
        measure(database.database_url(bench_name), days=size.days, requests=requests, workers=workers, say=say,
                write=write)
    finally:
        if drop:
            database.drop(source, bench_name)
            say(f"dropped {bench_name}")


def measure(database_url: str, *, days: int, requests: int, workers: int, say, write) -> None:
    """Every page round-robin, the warm-up requests then ``requests`` timed ones each."""
    token, _ = Token.objects.get_or_create(user=User.objects.get(username=ADMIN_USERNAME))
    password = read_state("admin_password")
    targets = pages(days)
    connections.close_all()  # the server's workers open their own
    with gunicorn(database_url, workers) as port:
        headers = {"session": {"Cookie": f"sessionid={log_in(port, ADMIN_USERNAME, password)}"},
                   "token": {"Authorization": f"Token {token.key}", "Accept": "application/json"}}
        say(f"gunicorn on 127.0.0.1:{port} ({workers} workers, DEBUG off); "
            f"{len(targets)} pages, {WARM_UP_REQUESTS} warm-up + {requests} timed requests each")
        times = {label: [] for label, _path, _auth in targets}
        statuses = {}
        for round_number in range(WARM_UP_REQUESTS + requests):
            for label, path, auth in targets:
                elapsed, status = get(port, path, headers[auth])
                statuses[label] = status
                if round_number >= WARM_UP_REQUESTS:
                    times[label].append(elapsed)
    report(targets, times, statuses, write)
