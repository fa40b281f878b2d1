"""One run of bench_intake: a fresh database, the SQL floor, then every phase through gunicorn."""

import asyncio
import json
import random
import secrets
import time
from collections import Counter
from dataclasses import dataclass

from django.conf import settings
from django.core.management import call_command
from django.db import connections
from django.test.utils import override_settings

from benchmarks.database import create_database, drop_database, server_connection
from benchmarks.pages.database import database_url
from benchmarks.pages.server import gunicorn
from games.choices import RoundStatus
from games.models import Round

from . import data
from .client import closed_loop, http_request, open_loop, send
from .cpu import CpuSampler
from .floor import sql_floor
from .pooled import labels as pooled_labels
from .pooled import phases as pooled_phases
from .pooled import pooled_gunicorn
from .prefill import prefill
from .report import Results, report
from .waits import WaitSampler, shares
from .worker import settlement_worker

WARM_UP_SECONDS = 2
BIG_ROUND_BETS = 1000
DEAL_EVERY_SECONDS = 1.0
LAG_ROUNDS = 20
SETTLE_WAIT_SECONDS = 120


@dataclass(frozen=True)
class Plan:
    clients: int
    seconds: float
    workers: int
    bulk_size: int
    accounts: int
    rounds: int
    lag_seconds: float
    broker: str
    cache: str
    # Each phase is measured in this many slices, taken in turn with the other phases' slices, so that
    # a slow spell of a noisy machine weighs on every phase alike instead of on the one it fell in.
    slices: int = 3
    prefill: int = 0  # past bets written before the phases (benchmarks.intake.prefill)


def labels(plan: Plan) -> dict:
    return {
        "floor": "framework floor: GET of a missing page (404)",
        "read": "authenticated read: GET /games/{slug}/",
        "single": f"single bets over {plan.rounds} rounds",
        "single_metrics_on": "single bets, the same, metrics on (own server)",
        "single_metrics_off": "single bets, the same, metrics off (own server)",
        "one_round": "single bets on one round",
        "bulk": f"bulk bets, {plan.bulk_size} a request, {plan.rounds} rounds",
        "sql": f"SQL floor: a bet's writes, {plan.clients} clients",
        **pooled_labels(plan.bulk_size),
    }


def fresh_database(say) -> None:
    """Drop and create the configured database (its name ends in "bench"), then migrate it."""
    params = dict(settings.DATABASES["default"])
    connections.close_all()
    with server_connection(params, autocommit=True) as maintenance:
        drop_database(maintenance, params["NAME"])
        create_database(maintenance, params["NAME"])
    call_command("migrate", interactive=False, verbosity=0)
    say(f"created and migrated {params['NAME']}")


def refresh_statistics() -> None:
    """ANALYZE, as autovacuum keeps a production database's statistics fresh: without them the
    planner takes a new database's tables for empty (autovacuum may be off on a test machine), and
    a phase would measure a plan no production database would pick."""
    with connections["default"].cursor() as cursor:
        cursor.execute("ANALYZE")
    connections.close_all()


class Traffic:
    """The requests of each phase, each bet with a key of its own."""

    def __init__(self, token: str, accounts: list, slug: str):
        self.auth = {"Authorization": f"Token {token}", "Accept": "application/json"}
        self.accounts = accounts
        self.slug = slug

    def missing_page(self, sequence: int) -> bytes:
        return http_request("GET", "/api/v1/no-such-page/", {})

    def read(self, sequence: int) -> bytes:
        return http_request("GET", f"/api/v1/games/{self.slug}/", self.auth)

    def _bet(self, sequence: int) -> dict:
        return {"account": random.choice(self.accounts), "bet_type": random.choice(["PLAYER", "BANKER", "TIE"]),
                "stake": "1.00", "idempotency_key": f"bench-{time.monotonic_ns()}-{sequence}"}

    def single(self, rounds: list):
        def make(sequence: int) -> bytes:
            body = json.dumps(self._bet(sequence)).encode()
            return http_request("POST", f"/api/v1/rounds/{random.choice(rounds)}/bets/", self.auth, body)
        return make

    def bulk(self, rounds: list, size: int):
        def make(sequence: int) -> bytes:
            body = json.dumps({"bets": [self._bet(sequence * size + n) for n in range(size)]}).encode()
            return http_request("POST", f"/api/v1/rounds/{random.choice(rounds)}/bets/bulk/", self.auth, body)
        return make

    def deal(self, round_id: int) -> bytes:
        return http_request("POST", f"/api/v1/rounds/{round_id}/deal/", self.auth, b"{}")

    def open_round(self) -> bytes:
        return http_request("POST", f"/api/v1/games/{self.slug}/rounds/", self.auth, b"{}")


def run(plan: Plan, *, say, write) -> None:
    fresh_database(say)
    # The token is made here and checked by the servers: both under the same peppers (the
    # environment's, or one made for the run).
    peppers = settings.API_TOKEN_PEPPERS or [secrets.token_hex(32)]
    with override_settings(API_TOKEN_PEPPERS=peppers):
        token = data.client_token()
    game = data.game()
    accounts = data.accounts(plan.accounts)
    rounds = {name: data.open_rounds(game.pk, count) for name, count in [
        ("single", plan.rounds), ("one_round", 1), ("bulk", plan.rounds), ("sql", plan.rounds),
        ("lag", LAG_ROUNDS), ("big", 1)]}
    client_id = data.User.objects.get(username="bench-game-server").pk
    params = dict(settings.DATABASES["default"])
    url = database_url(params["NAME"])
    refresh_statistics()
    results = Results()
    traffic = Traffic(token, accounts, data.GAME_SLUG)
    # LOG_LEVEL ERROR: Django logs every 404 as a warning, which would weigh on the framework floor.
    # As in production: the throttle's windows in Redis, shared by the workers.
    server_env = {"CELERY_BROKER_URL": plan.broker, "CACHE_URL": plan.cache, "LOG_LEVEL": "ERROR",
                  "API_TOKEN_PEPPERS": ",".join(peppers)}
    # Two more gunicorns, alike but for the metrics and idle but for their own phase, serve single
    # bets with the metrics on and off: the metrics' cost is their difference. Each has served the same
    # requests before, so neither carries the main server's history of other phases.
    with (gunicorn(url, plan.workers, server_env) as port, settlement_worker(url, plan.broker),
          gunicorn(url, plan.workers, server_env) as metrics_on_port,
          gunicorn(url, plan.workers, {**server_env, "METRICS_ENABLED": "0"}) as metrics_off_port,
          pooled_gunicorn(params, plan.workers, server_env, say) as pooled_port):
        say(f"gunicorn on 127.0.0.1:{port} ({plan.workers} workers; metrics on {metrics_on_port} and off "
            f"{metrics_off_port}), {plan.clients} clients, {plan.seconds:.0f} s a phase")
        warm_up(port, metrics_on_port, metrics_off_port, pooled_port, traffic=traffic, rounds=rounds["sql"],
                clients=plan.clients)
        if plan.prefill:
            # Single bets / floor on the empty tables first, then again on the history, in one run.
            results.empty = single_over_floor(port, traffic, rounds["single"], plan, say)
            prefill(plan.prefill, client_id=client_id, accounts=data.account_id_range(), say=say)
            refresh_statistics()
            warm_up(port, metrics_on_port, metrics_off_port, pooled_port, traffic=traffic, rounds=rounds["sql"],
                    clients=plan.clients)
        say(f"SQL floor: pgbench, {plan.clients} clients, {plan.seconds:.0f} s")
        results.sql_floor = sql_floor(params, clients=plan.clients, seconds=int(plan.seconds),
                                      accounts=data.account_id_range(),
                                      rounds=(min(rounds["sql"]), max(rounds["sql"])), client_id=client_id)
        connections.close_all()
        ports = {"single_metrics_on": metrics_on_port, "single_metrics_off": metrics_off_port}
        # The same bets through PgBouncer in transaction mode, beside the direct ones (benchmarks.intake.pooled).
        pooled, pooled_ports = pooled_phases(pooled_port, traffic, rounds, plan.bulk_size)
        ports.update(pooled_ports)
        phases = [
            ("floor", traffic.missing_page, {404}, 0),
            ("read", traffic.read, {200}, 0),
            ("single", traffic.single(rounds["single"]), {201}, 1),
            ("single_metrics_on", traffic.single(rounds["single"]), {201}, 1),
            ("single_metrics_off", traffic.single(rounds["single"]), {201}, 1),
            ("one_round", traffic.single(rounds["one_round"]), {201}, 1),
            ("bulk", traffic.bulk(rounds["bulk"], plan.bulk_size), {200}, plan.bulk_size),
            *pooled,
        ]
        counts = {key: Counter() for key, *_ in phases}
        cpu = {key: Counter() for key, *_ in phases}
        for turn in range(plan.slices):
            refresh_statistics()
            results.turns.append({})
            for key, make, expected, size in in_turn(phases, turn):
                if turn == 0:
                    say(f"  {labels(plan)[key]}")
                phase_port = ports.get(key, port)
                with WaitSampler(params) as sampler, CpuSampler(phase_port) as used:
                    part = closed_loop(phase_port, make, clients=plan.clients, seconds=plan.seconds / plan.slices,
                                       expected=expected)
                results.turns[-1][key] = part.per_second
                counts[key].update(sampler.counts)
                cpu[key].update(used.used)
                results.phases[key] = (results.phases[key][0].joined(part) if key in results.phases else part, size)
        results.waits = {key: shares(counted) for key, counted in counts.items()}
        results.cpu = cpu
        if plan.lag_seconds:
            refresh_statistics()
            results.lag = dealing_under_load(port, traffic, plan, rounds, results.phases["single"][0].per_second,
                                             say)
    connections.close_all()
    results.problems = [f"ledger differs from the balance of {', '.join(found[:5])}"
                        for found in [data.ledger_problems()] if found]
    report(results, labels(plan), write)


def warm_up(*ports, traffic: Traffic, rounds: list, clients: int) -> None:
    closed_loop(ports[0], traffic.missing_page, clients=clients, seconds=WARM_UP_SECONDS, expected={404})
    for warmed in filter(None, ports):
        closed_loop(warmed, traffic.single(rounds), clients=clients, seconds=WARM_UP_SECONDS, expected={201})


def single_over_floor(port: int, traffic: Traffic, rounds: list, plan: Plan, say) -> list:
    """Single bets / framework floor on the tables as they stand, turn by turn (``plan.slices``)."""
    say(f"  single bets / framework floor on the empty tables, {plan.slices} turns")
    refresh_statistics()
    turns = []
    for _ in range(plan.slices):
        seconds = plan.seconds / plan.slices
        floor = closed_loop(port, traffic.missing_page, clients=plan.clients, seconds=seconds, expected={404})
        single = closed_loop(port, traffic.single(rounds), clients=plan.clients, seconds=seconds, expected={201})
        turns.append(single.per_second / floor.per_second if floor.per_second else 0.0)
    return turns


def in_turn(phases: list, turn: int) -> list:
    """The phases in their order, but for the metrics' pair, which swap places every other turn: the
    one that follows the other would otherwise always meet what its slice left behind."""
    if turn % 2 == 0:
        return phases
    keys = [key for key, *_ in phases]
    on, off = keys.index("single_metrics_on"), keys.index("single_metrics_off")
    swapped = list(phases)
    swapped[on], swapped[off] = phases[off], phases[on]
    return swapped


def dealing_under_load(port: int, traffic: Traffic, plan: Plan, rounds: dict, single_rate: float, say) -> dict:
    """Single bets at 80 % of their maximum over live rounds while a dealer deals one a second (the
    first a round holding BIG_ROUND_BETS bets) and opens its replacement; the settlement lag of each."""
    big = rounds["big"][0]
    for start in range(0, BIG_ROUND_BETS, 500):
        size = min(500, BIG_ROUND_BETS - start)
        _, status, _ = asyncio.run(send(port, traffic.bulk([big], size)(start // 500)))
        if status != 200:
            raise RuntimeError(f"filling the big round failed: HTTP {status}")
    rate = max(1.0, 0.8 * single_rate)
    live = list(rounds["lag"])
    say(f"  dealing under load: {rate:.0f} bets/s for {plan.lag_seconds:.0f} s")

    async def dealer(deadline: float) -> list:
        deals = []
        await asyncio.sleep(DEAL_EVERY_SECONDS)
        elapsed, status, _ = await send(port, traffic.deal(big))
        deals.append((big, elapsed, status))
        while time.perf_counter() + DEAL_EVERY_SECONDS < deadline:
            await asyncio.sleep(DEAL_EVERY_SECONDS)
            _, status, body = await send(port, traffic.open_round())
            if status == 201:
                live.append(json.loads(body)["id"])
            round_id = live.pop(0)
            elapsed, status, _ = await send(port, traffic.deal(round_id))
            deals.append((round_id, elapsed, status))
        return deals

    def make(sequence: int) -> bytes:
        return traffic.single(live[-LAG_ROUNDS:])(sequence)

    bets, deals = open_loop(port, make, rate=rate, seconds=plan.lag_seconds, expected={201}, alongside=dealer)
    dealt = [round_id for round_id, _ms, status in deals if status == 200]
    lags = _settlement_lags(dealt)
    # A bet that raced its round's deal is refused (409): expected, and counted apart.
    refused = bets.unexpected.pop(409, 0)
    return {"rate": rate, "seconds": plan.lag_seconds, "rounds": LAG_ROUNDS, "bets": bets, "refused": refused,
            "big_bets": BIG_ROUND_BETS, "big_deal_ms": deals[0][1],
            "big_lag": lags.pop(big, float("nan")), "lags": list(lags.values()),
            "deal_ms": [ms for _id, ms, _status in deals]}


def _settlement_lags(round_ids: list) -> dict:
    """{round id: seconds from its deal to its settlement}, waiting for the worker to finish."""
    deadline = time.monotonic() + SETTLE_WAIT_SECONDS
    rounds = Round.objects.filter(pk__in=round_ids)
    while rounds.filter(status=RoundStatus.DEALT).exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    lags = {round_id: (settled - dealt).total_seconds()
            for round_id, dealt, settled in rounds.values_list("pk", "dealt_at", "settled_at") if settled}
    connections.close_all()
    return lags
