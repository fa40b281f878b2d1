"""The archive benchmark: whole months of the pages benchmark's database archived to files and
restored from them while bets keep arriving through gunicorn, one after another, as a game server
places them. What it measures: the archive's and the restore's time, the files' sizes, and each
bet's latency before, during the archive, during the restore and after."""

import http.client
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, connections
from django.test.utils import override_settings

from apitokens.choices import Scope
from apitokens.services import token_create
from audit import partitioning
from dbutils import partitions
from games import services as game_services
from games.models import GameInstance

from .pages.report import percentile
from .pages.server import CLIENT_TIMEOUT_SECONDS, FORWARDED_HTTPS, gunicorn

GAME_SERVER = "bench-game-server"  # the pages benchmark's integration user (benchmarks.pages.data)
PLAYER = "bench-player-000001"
PHASES = ("before", "archive", "restore", "after")


@dataclass
class Bets:
    """Each bet's latency in ms by phase, and the answers that were not 201."""

    phase: str = "before"
    latencies: dict = field(default_factory=lambda: {phase: [] for phase in PHASES})
    failures: list = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)


def _place_bets(port: int, round_id: int, secret: str, bets: Bets) -> None:
    headers = {**FORWARDED_HTTPS, "Authorization": f"Token {secret}", "Content-Type": "application/json"}
    n = 0
    while not bets.stop.is_set():
        body = json.dumps({"account": PLAYER, "bet_type": "BANKER", "stake": "1.00",
                           "idempotency_key": f"archive-bench-{round_id}-{n}"})
        phase, started = bets.phase, time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CLIENT_TIMEOUT_SECONDS)
        try:
            conn.request("POST", f"/api/v1/rounds/{round_id}/bets/", body=body, headers=headers)
            response = conn.getresponse()
            answer = response.read()
        finally:
            conn.close()
        if response.status == 201:
            bets.latencies[phase].append((time.perf_counter() - started) * 1000)
        else:
            bets.failures.append((phase, response.status, answer[:300]))
        n += 1


def run(database_url: str, *, before, to: Path, settle_seconds: float, say, write) -> bool:
    """Archive the months before ``before`` into ``to``, drop the detached tables (the files are
    what a restore has), restore every file; bets arrive all along. True when every bet answered 201."""
    peppers = settings.API_TOKEN_PEPPERS or [secrets.token_hex(32)]
    owner = User.objects.get(username=GAME_SERVER)
    with override_settings(API_TOKEN_PEPPERS=peppers):
        _token, secret = token_create(owner=owner, actor="system:bench-archive", scopes=[Scope.BETS])
    game = GameInstance.objects.order_by("pk").first()
    round_id = game_services.round_open(game_id=game.pk, actor=owner).pk
    connections.close_all()
    bets, timings = Bets(), {}
    with gunicorn(database_url, 2, {"API_TOKEN_PEPPERS": ",".join(peppers)}) as port:
        client = threading.Thread(target=_place_bets, args=(port, round_id, secret, bets))
        client.start()
        try:
            time.sleep(settle_seconds)
            bets.phase, started = "archive", time.perf_counter()
            archived = partitioning.partitions_archive(before=before, to=to)
            timings["archive"] = time.perf_counter() - started
            say(f"archived in {timings['archive']:.1f} s; kept online: {archived.kept_online or 'nothing'}")
            with connection.cursor() as cursor:
                for table in partitioning.PARTITIONED_TABLES:
                    for name in partitions.archived_partitions(cursor, table).values():
                        cursor.execute(f'DROP TABLE "{partitions.ARCHIVE_SCHEMA}"."{name}"')
            bets.phase, started = "restore", time.perf_counter()
            partitioning.partitions_restore(files=[to / manifest["file"] for manifest in archived.manifests])
            timings["restore"] = time.perf_counter() - started
            bets.phase = "after"
            time.sleep(settle_seconds)
        finally:
            bets.stop.set()
            client.join(CLIENT_TIMEOUT_SECONDS)
    _report(archived.manifests, to, timings, bets, write)
    return not bets.failures


def _report(manifests: list, to: Path, timings: dict, bets: Bets, write) -> None:
    by_table: dict = {}
    for manifest in manifests:
        rows, size, months = by_table.get(manifest["table"], (0, 0, []))
        by_table[manifest["table"]] = (rows + manifest["rows"], size + (to / manifest["file"]).stat().st_size,
                                       [*months, manifest["month"]])
    write(f"archive {timings['archive']:.1f} s, restore from the files {timings['restore']:.1f} s")
    for table, (rows, size, months) in by_table.items():
        write(f"  {table}: {rows:,} rows of {', '.join(months)}, {size / 2**20:,.1f} MiB of files "
              f"({size / rows:.1f} bytes a row)")
    write(f"{'bets through the API':<22}{'bets':>8}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for phase in PHASES:
        values = bets.latencies[phase]
        if values:
            write(f"  {phase:<20}{len(values):>8,}{percentile(values, 0.5):>10.1f}{percentile(values, 0.99):>10.1f}"
                  f"{max(values):>10.1f}")
    for phase, status, answer in bets.failures[:5]:
        write(f"  not 201 ({phase}): {status} {answer!r}")
