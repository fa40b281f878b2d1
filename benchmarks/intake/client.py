"""A lean HTTP client on asyncio: many requests in flight from one thread, no thread per request.

gunicorn's sync workers close the connection after each response, as they would for an integration
client, so every request opens its own connection; the response is read to its end. A request goes
to a port of 127.0.0.1, or to the next of several web nodes in turn (``Nodes``: round-robin, as a
load balancer would spread them).
"""

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from benchmarks.pages.server import FORWARDED_HTTPS

# Requests in flight at most in an open-loop phase: beyond it, latecomers wait (and count the wait).
OPEN_LOOP_CAP = 256


@dataclass
class Phase:
    """What one phase measured: latencies in ms of the requests that got the expected status."""

    seconds: float = 0.0
    latencies: list = field(default_factory=list)
    unexpected: dict = field(default_factory=dict)  # status → count
    client_cpu_seconds: float = 0.0

    def add(self, elapsed_ms: float, status: int, expected: set) -> None:
        if status in expected:
            self.latencies.append(elapsed_ms)
        else:
            self.unexpected[status] = self.unexpected.get(status, 0) + 1

    def joined(self, other: "Phase") -> "Phase":
        """This phase and ``other`` (a later slice of it) as one."""
        unexpected = dict(self.unexpected)
        for status, count in other.unexpected.items():
            unexpected[status] = unexpected.get(status, 0) + count
        return Phase(seconds=self.seconds + other.seconds, latencies=self.latencies + other.latencies,
                     unexpected=unexpected, client_cpu_seconds=self.client_cpu_seconds + other.client_cpu_seconds)

    @property
    def requests(self) -> int:
        """Every request answered, whatever its status."""
        return len(self.latencies) + sum(self.unexpected.values())

    @property
    def per_second(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0


def http_request(method: str, path: str, headers: dict, body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *(
        f"{name}: {value}" for name, value in {**FORWARDED_HTTPS, **headers}.items())]
    if body or method == "POST":
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class Nodes:
    """Web nodes by URL (http://host:port), each request to the next one in turn."""

    def __init__(self, urls: list):
        self.addresses = [(parts.hostname, parts.port or 80) for parts in map(urlsplit, urls)]
        self._turn = itertools.cycle(self.addresses)

    def next(self) -> tuple[str, int]:
        return next(self._turn)


def address(where: "int | Nodes") -> tuple[str, int]:
    return where.next() if isinstance(where, Nodes) else ("127.0.0.1", where)


async def send(where: "int | Nodes", raw: bytes) -> tuple[float, int, bytes]:
    """(milliseconds, HTTP status, body) of a request to port ``where`` of 127.0.0.1 or to the next
    of the nodes; status 0 when the connection failed."""
    started = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection(*address(where))
        writer.write(raw)
        response = await reader.read()
        writer.close()
    except OSError:
        return (time.perf_counter() - started) * 1000, 0, b""
    elapsed = (time.perf_counter() - started) * 1000
    head, _, body = response.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        status = 0
    return elapsed, status, body


def closed_loop(port: "int | Nodes", make_request: Callable[[int], bytes], *, clients: int, seconds: float,
                expected: set) -> Phase:
    """``clients`` loops, each sending its next request when the last one answered, for ``seconds``."""
    phase = Phase()

    async def client(number: int, deadline: float):
        sequence = 0
        while time.perf_counter() < deadline:
            elapsed, status, _ = await send(port, make_request(number * 1_000_000_000 + sequence))
            phase.add(elapsed, status, expected)
            sequence += 1

    async def main():
        deadline = time.perf_counter() + seconds
        await asyncio.gather(*(client(number, deadline) for number in range(clients)))

    return _timed(phase, main)


def open_loop(port: "int | Nodes", make_request: Callable[[int], bytes], *, rate: float, seconds: float,
              expected: set, alongside=None) -> tuple[Phase, object]:
    """Requests started at ``rate`` per second, whether or not earlier ones answered, for ``seconds``;
    ``alongside`` (a coroutine function taking the deadline) runs meanwhile, its result returned too."""
    phase = Phase()
    result = {}

    async def one(sequence: int, gate: asyncio.Semaphore):
        async with gate:
            elapsed, status, _ = await send(port, make_request(sequence))
        phase.add(elapsed, status, expected)

    async def main():
        gate = asyncio.Semaphore(OPEN_LOOP_CAP)
        start = time.perf_counter()
        deadline = start + seconds
        side = asyncio.create_task(alongside(deadline)) if alongside else None
        tasks, sequence = [], 0
        while (due := start + sequence / rate) < deadline:
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            tasks.append(asyncio.create_task(one(sequence, gate)))
            sequence += 1
        await asyncio.gather(*tasks)
        if side:
            result["alongside"] = await side

    _timed(phase, main)
    return phase, result.get("alongside")


def _timed(phase: Phase, main) -> Phase:
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(main())
    phase.seconds = time.perf_counter() - wall
    phase.client_cpu_seconds = time.process_time() - cpu
    return phase
