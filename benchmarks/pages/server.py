"""gunicorn on 127.0.0.1, serving the bench database as in production (DEBUG off), and HTTP to it."""

import http.client
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from contextlib import contextmanager
from http.cookies import SimpleCookie

from django.conf import settings
from django.core.management.base import CommandError

START_TIMEOUT = 60
PROXY_HEADER = "HTTP_X_FORWARDED_PROTO"
FORWARDED_HTTPS = {"X-Forwarded-Proto": "https"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def gunicorn(database_url: str, workers: int, extra_env: dict | None = None):
    """Yield the port of a gunicorn that answers; it stops (its whole process group) on the way out.

    Its tasks run in-process unless ``extra_env`` names a CELERY_BROKER_URL. As in production, it
    serves static files collected beforehand (here into a directory of its own, gone afterwards)."""
    with tempfile.TemporaryDirectory(prefix="bench-static-") as static_root:
        subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=settings.BASE_DIR,
                       env={**os.environ, "STATIC_ROOT": static_root}, check=True)
        with _served(database_url, workers, {"STATIC_ROOT": static_root, **(extra_env or {})}) as port:
            yield port


@contextmanager
def _served(database_url: str, workers: int, extra_env: dict):
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(40),
           "ALLOWED_HOSTS": "127.0.0.1,localhost", "DATABASE_CONN_MAX_AGE": "600", "LOG_LEVEL": "WARNING",
           # As in production behind a TLS-terminating proxy: HTTPS_ONLY stays on, and the
           # clients say the request came over HTTPS, as the proxy would.
           "HTTPS_ONLY": "1", "SECURE_PROXY_SSL_HEADER": PROXY_HEADER}
    env.pop("CELERY_BROKER_URL", None)
    env.update(extra_env)
    executable = os.path.join(os.path.dirname(sys.executable), "gunicorn")
    server = subprocess.Popen(
        [executable, "baccarat_site.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
         "--log-level", "warning", "--timeout", str(CLIENT_TIMEOUT_SECONDS)],
        cwd=settings.BASE_DIR, env=env, start_new_session=True,
    )
    try:
        _wait_for(port, server)
        yield port
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def _wait_for(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise CommandError("gunicorn exited before it answered")
        try:
            get(port, "/admin/login/", {})
            return
        except OSError:
            time.sleep(0.3)
    raise CommandError(f"gunicorn did not answer within {START_TIMEOUT} s")


CLIENT_TIMEOUT_SECONDS = 120  # gunicorn's own --timeout: a page this slow has its worker killed


def request(port: int, method: str, path: str, headers: dict, body: bytes | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CLIENT_TIMEOUT_SECONDS)
    try:
        conn.request(method, path, body=body, headers={"Host": "127.0.0.1", **FORWARDED_HTTPS, **headers})
        response = conn.getresponse()
        content = response.read()
        return response, content
    finally:
        conn.close()


def get(port: int, path: str, headers: dict) -> tuple:
    """(milliseconds of the whole request, HTTP status)."""
    started = time.perf_counter()
    response, _content = request(port, "GET", path, headers)
    return (time.perf_counter() - started) * 1000, response.status


def _cookies(response) -> SimpleCookie:
    cookies = SimpleCookie()  # each Set-Cookie on its own: joined, their expiry dates' commas break parsing
    for name, value in response.getheaders():
        if name.lower() == "set-cookie":
            cookies.load(value)
    return cookies


def _form_token(content: bytes) -> str:
    marker = b'name="csrfmiddlewaretoken" value="'
    start = content.index(marker) + len(marker)
    return content[start:content.index(b'"', start)].decode()


def _post_form(port: int, path: str, cookies: dict, fields: dict):
    """GET the form at ``path`` for its CSRF token, then POST ``fields`` to it, as a browser does."""
    jar = "; ".join(f"{name}={value}" for name, value in cookies.items())
    _response, content = request(port, "GET", path, {"Cookie": jar})
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": _form_token(content), **fields}).encode()
    return request(port, "POST", path, {
        "Cookie": jar, "Content-Type": "application/x-www-form-urlencoded",
        "Referer": f"https://127.0.0.1{path}"}, body)  # the page as the browser saw it behind the TLS proxy


def log_in(port: int, username: str, password: str, *, second_factor_path: str | None = None,
           second_factor_code=None) -> str:
    """Sign in through the admin's login form, as a browser does, then enter the code
    ``second_factor_code()`` gives at ``second_factor_path``; the session cookie's value."""
    response, _content = request(port, "GET", "/admin/login/", {})
    cookies = {"csrftoken": _cookies(response)["csrftoken"].value}
    response, _ = _post_form(port, "/admin/login/", cookies,
                             {"username": username, "password": password, "next": "/admin/"})
    cookies.update({name: morsel.value for name, morsel in _cookies(response).items()})  # a log-in rotates both
    if response.status != 302 or "sessionid" not in cookies:
        raise CommandError(f"could not sign in to the admin (HTTP {response.status})")
    if second_factor_path:
        response, _ = _post_form(port, second_factor_path, cookies, {"code": second_factor_code(), "next": "/admin/"})
        cookies.update({name: morsel.value for name, morsel in _cookies(response).items()})
        if response.status != 302 or second_factor_path in (response.getheader("Location") or ""):
            raise CommandError(f"the admin refused the second factor (HTTP {response.status})")
    return cookies["sessionid"]
