"""The request path's counts kept in memory and written in batches (monitoring.batching) add up to
exactly what observing each value on prometheus_client gives; and the statements of a request are
counted by the one wrapper each connection carries."""

import os
import random
import time
from contextlib import ExitStack

import pytest
from django.db import connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import resolve
from prometheus_client import CollectorRegistry, Counter, Histogram

from monitoring.batching import Batched, Direct, batch
from monitoring.middleware import QUERIES
from tests.conftest import api_client_for
from tests.monitoring.helpers import TOKEN, parse, value

BUCKETS = (0.0025, 0.005, 0.01, 0.025, 0.1, 1)


def metrics_in(registry: CollectorRegistry) -> dict:
    return {
        "latency": Histogram("t_latency_seconds", "t", ["view", "status"], buckets=BUCKETS, registry=registry),
        "size": Histogram("t_size", "t", buckets=(1, 10, 100), registry=registry),
        "bets": Counter("t_bets", "t", ["game"], registry=registry),
    }


def samples(registry: CollectorRegistry) -> dict:
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in registry.collect() for sample in family.samples if not sample.name.endswith("_created")}


def record(way, metrics: dict, observations: list) -> None:
    for kind, labels, amount in observations:
        if kind == "bets":
            way.inc(metrics[kind], labels, amount)
        else:
            way.observe(metrics[kind], labels, amount)


def observations(count: int) -> list:
    chosen = random.Random(7)
    # Values on the buckets' bounds, between them and beyond the last; counts of one and of several.
    values = [*BUCKETS, 0, 0.0001, 0.003, 0.07, 2.5, 40.0]
    made = []
    for _ in range(count):
        kind = chosen.choice(["latency", "size", "bets"])
        if kind == "latency":
            made.append((kind, (chosen.choice(["a", "b"]), chosen.choice([201, 400])), chosen.choice(values)))
        elif kind == "size":
            made.append((kind, (), chosen.choice([1, 5, 10, 100, 101, 1000])))
        else:
            made.append((kind, (chosen.choice(["x", "y"]),), chosen.choice([1, 1, 3])))
    return made


def test_batched_counts_write_the_same_samples_as_observing_each_value():
    direct_registry, batched_registry = CollectorRegistry(), CollectorRegistry()
    direct, batched = metrics_in(direct_registry), metrics_in(batched_registry)
    made = observations(3000)
    way = Batched(3600)  # written only when flushed here
    record(Direct(), direct, made[:1000])
    record(way, batched, made[:1000])
    way.flush()
    record(Direct(), direct, made[1000:])
    record(way, batched, made[1000:])
    assert samples(batched_registry) != samples(direct_registry)  # the rest still pending
    way.flush()
    expected, written = samples(direct_registry), samples(batched_registry)
    assert written.keys() == expected.keys()
    for key, count in expected.items():
        # Every bucket and count exactly; a sum as floats add up in another order (a batch's first).
        assert written[key] == (pytest.approx(count, rel=1e-12) if key[0].endswith("_sum") else count), key
    assert expected[("t_latency_seconds_bucket", (("le", "0.0025"), ("status", "201"), ("view", "a")))] > 0
    assert expected[("t_size_count", ())] > 0


def test_nothing_is_written_before_the_flush_and_a_flush_leaves_nothing_pending():
    registry = CollectorRegistry()
    metrics = metrics_in(registry)
    way = Batched(3600)
    way.inc(metrics["bets"], ("x",), 2)
    way.observe(metrics["size"], (), 5)
    assert samples(registry).get(("t_bets_total", (("game", "x"),)), 0) == 0
    assert samples(registry)[("t_size_count", ())] == 0
    way.flush()
    way.flush()  # nothing left to add twice
    assert samples(registry)[("t_bets_total", (("game", "x"),))] == 2
    assert samples(registry)[("t_size_count", ())] == 1


def test_the_writer_thread_writes_within_its_interval():
    registry = CollectorRegistry()
    metrics = metrics_in(registry)
    way = Batched(0.05)
    way.inc(metrics["bets"], ("x",))
    deadline = time.monotonic() + 10
    while samples(registry).get(("t_bets_total", (("game", "x"),)), 0) != 1:
        assert time.monotonic() < deadline, "the writer thread never wrote"
        time.sleep(0.02)
    assert way._thread.is_alive() and way._thread.daemon


def test_a_forked_child_leaves_its_parents_counts_to_the_parent():
    registry = CollectorRegistry()
    metrics = metrics_in(registry)
    way = Batched(3600)
    way.inc(metrics["bets"], ("x",))
    child = os.fork()
    if child == 0:  # the child: nothing pending, no writer thread
        os._exit(0 if not way._pending and way._thread is None else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    way.flush()
    assert samples(registry)[("t_bets_total", (("game", "x"),))] == 1


def test_zero_seconds_writes_each_observation_at_once():
    assert isinstance(batch(0), Direct)
    assert isinstance(batch(1), Batched)


def test_a_request_counts_the_statements_it_ran(settings, integration):
    settings.METRICS_TOKEN = TOKEN
    client = api_client_for(integration)

    def scrape() -> dict:
        return parse(Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode())
    path = "/api/v1/rounds/"
    labels = {"view": resolve(path).view_name, "method": "GET"}
    assert client.get(path).status_code == 200  # the token's row read once
    before = scrape()
    with ExitStack() as stack:  # on every database: the reads may go to a replica
        captured = [stack.enter_context(CaptureQueriesContext(connections[alias])) for alias in connections]
        assert client.get(path).status_code == 200
    ran = sum(len(queries) for queries in captured)  # read before the next request clears the log
    after = scrape()
    assert ran > 0
    assert value(after, "baccarat_http_request_queries_count", **labels) == value(
        before, "baccarat_http_request_queries_count", **labels) + 1
    assert value(after, "baccarat_http_request_queries_sum", **labels) == value(
        before, "baccarat_http_request_queries_sum", **labels) + ran


@pytest.mark.django_db(transaction=True)
def test_a_connection_carries_the_counting_wrapper_once_through_reconnections():
    Client().get("/-/alive")  # the middleware made
    for _ in range(2):
        connection.close()
        connection.ensure_connection()
    assert connection.execute_wrappers.count(QUERIES) == 1
