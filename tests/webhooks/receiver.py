"""A real HTTP receiver on 127.0.0.1 (a port of 8300-8349) that records what it is sent and answers
as the test scripts it: a status, a delay (for timeouts), or waiting until the test releases it."""

import hashlib
import hmac
import http.server
import json
import threading
from contextlib import suppress

PORTS = range(8330, 8350)


class Receiver:
    def __init__(self):
        self.requests = []  # (headers dict, body bytes)
        # per request, in order: ("status", code) | ("sleep", seconds) | ("hold", None) | ("redirect", url)
        self.script = []
        self.released = threading.Event()
        self.arrived = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the name http.server calls
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append(({name.lower(): value for name, value in self.headers.items()}, body))
                receiver.arrived.set()
                kind, value = receiver.script.pop(0) if receiver.script else ("status", 200)
                location = value if kind == "redirect" else None
                if kind == "redirect":
                    value = 302
                elif kind == "sleep":
                    threading.Event().wait(value)
                    value = 200
                elif kind == "hold":
                    receiver.released.wait(60)
                    value = 200
                with suppress(OSError):  # the client may have given up (timeout) or died
                    self.send_response(value)
                    self.send_header("Content-Type", "text/plain")
                    if location:
                        self.send_header("Location", location)
                    self.end_headers()
                    self.wfile.write(b"ok" if value < 300 else b"try again")

            def log_message(self, *args):
                pass

        for port in PORTS:
            try:
                self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
                break
            except OSError:
                continue
        else:
            raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.released.set()
        self.server.shutdown()
        self.server.server_close()

    def events(self) -> list:
        return [json.loads(body) for _headers, body in self.requests]


def verifies(headers: dict, body: bytes, secret: str, tolerance: int = 300, now: int | None = None) -> bool:
    """What a receiver does, written from the README's scheme alone (not from the project's code)."""
    import time

    parts = [item.split("=", 1) for item in headers["baccarat-signature"].split(",")]
    timestamp = int(next(value for key, value in parts if key == "t"))
    if abs((now or int(time.time())) - timestamp) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return any(key == "v1" and hmac.compare_digest(value, expected) for key, value in parts)
