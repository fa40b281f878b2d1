"""One run of the pages benchmark: its database (built, or reused), then every page timed."""

import secrets
import time

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection, connections
from django.test.utils import override_settings
from django.urls import reverse

from apitokens.choices import Scope
from apitokens.services import token_create
from settlement import aggregates

from . import database
from .audit_log import sequence_and_sign
from .data import ADMIN_USERNAME, DataSize, build, read_state, second_factor_code, write_state
from .report import report
from .server import CLIENT_TIMEOUT_SECONDS, get, gunicorn, log_in
from .targets import pages

WARM_UP_REQUESTS = 2
TIMED_OUT = "timeout"


def run(size: DataSize, *, requests: int, workers: int, reuse: bool, drop: bool, say, write) -> list:
    """``say`` tells the progress, ``write`` prints the report; the pages that did not answer 200."""
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
        if read_state("audit_public_key") is None:  # built before the benchmark signed heads
            write_state({"audit_public_key": sequence_and_sign()})
    else:
        say(f"migrated {bench_name} in {time.perf_counter() - started:.1f} s")
        build(size, say)
    try:
        failed = measure(database.database_url(bench_name), days=size.days, requests=requests, workers=workers,
                         say=say, write=write)
    finally:
        if drop:
            database.drop(source, bench_name)
            say(f"dropped {bench_name}")
    return failed


def measure(database_url: str, *, days: int, requests: int, workers: int, say, write) -> list:
    """Every page round-robin, the warm-up requests then ``requests`` timed ones each; the labels
    of the pages that did not answer 200."""
    # The API token is made here and checked by the server: both under the same peppers (the
    # environment's, or one made for the run).
    peppers = settings.API_TOKEN_PEPPERS or [secrets.token_hex(32)]
    with override_settings(API_TOKEN_PEPPERS=peppers):
        _token, secret = token_create(owner=User.objects.get(username=ADMIN_USERNAME), actor="system:bench-pages",
                                      scopes=[Scope.READ])
    password = read_state("admin_password")
    targets = pages(days)
    code = second_factor_code()
    connections.close_all()  # the server's workers open their own
    # The server checks heads with the run's public key alone, never a signing key of the environment.
    keys = {"AUDIT_PUBLIC_KEY": read_state("audit_public_key"), "AUDIT_SIGNING_KEY": "", "AUDIT_SIGNING_KEY_FILE": "",
            "API_TOKEN_PEPPERS": ",".join(peppers)}
    with gunicorn(database_url, workers, keys) as port:
        session = log_in(port, ADMIN_USERNAME, password, second_factor_path=reverse("admin:second_factor"),
                         second_factor_code=code)
        headers = {"session": {"Cookie": f"sessionid={session}"},
                   "token": {"Authorization": f"Token {secret}", "Accept": "application/json"}}
        say(f"gunicorn on 127.0.0.1:{port} ({workers} workers, DEBUG off); "
            f"{len(targets)} pages, {WARM_UP_REQUESTS} warm-up + {requests} timed requests each")
        times = {label: [] for label, _path, _auth in targets}
        statuses = {}
        for round_number in range(WARM_UP_REQUESTS + requests):
            for label, path, auth in targets:
                if statuses.get(label) == TIMED_OUT:
                    continue  # asked once: another wait of gunicorn's whole timeout would tell nothing more
                try:
                    elapsed, status = get(port, path, headers[auth])
                except TimeoutError:
                    elapsed, status = CLIENT_TIMEOUT_SECONDS * 1000, TIMED_OUT
                    times[label].append(elapsed)
                statuses[label] = status
                if round_number >= WARM_UP_REQUESTS:
                    times[label].append(elapsed)
    return report(targets, times, statuses, write)
