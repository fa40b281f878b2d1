"""/-/alive and /-/ready: answered before the host check and the HTTPS redirect, the readiness
checks named in the body, 503 naming the ones that fail (an unreachable database among them)."""

import json
import socket
import time

import pytest
from django.db import connections
from django.test import Client

from alerts import readiness as probes
from dbutils.redis_cache import RedisCache
from monitoring import readiness

CHECKS = ["database", "migrations", "broker", "cache"]


@pytest.fixture(autouse=True)
def fresh_answers(settings):
    """Each request checks again (but in the test of the reuse)."""
    settings.READINESS_CACHE_SECONDS = 0


def closed_port() -> int:
    """A port of this machine nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(path: str, **extra):
    return Client().get(path, **extra)


def test_alive_answers_without_the_database_a_known_host_or_https(settings):
    # No django_db mark: any query would raise (pytest-django blocks the database here).
    settings.HTTPS_ONLY = settings.SECURE_SSL_REDIRECT = True
    response = get("/-/alive", HTTP_HOST="10.0.3.7:8000")
    assert response.status_code == 200
    assert response.json() == {"status": "alive"}
    assert response["Cache-Control"] == "no-store"


def test_other_paths_still_check_the_host(settings):
    settings.HTTPS_ONLY = settings.SECURE_SSL_REDIRECT = False
    assert get("/-/alive/", HTTP_HOST="10.0.3.7:8000").status_code == 400  # not a probe: ALLOWED_HOSTS applies


@pytest.mark.django_db
def test_ready_lists_every_check(settings):
    settings.HTTPS_ONLY = settings.SECURE_SSL_REDIRECT = True
    response = get("/-/ready", HTTP_HOST="10.0.3.7:8000")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ready" and body["failing"] == []
    assert list(body["checks"]) == CHECKS
    assert all(check["ok"] and check["ms"] >= 0 for check in body["checks"].values())


@pytest.mark.django_db
def test_ready_is_503_naming_the_database_out_of_reach(monkeypatch):
    port = closed_port()
    unreachable = {**connections.settings["default"], "HOST": "127.0.0.1", "PORT": str(port)}
    unreachable.pop("EMBEDDED_DATA_DIR", None)  # no embedded server started for it
    monkeypatch.setitem(connections.settings, "default", unreachable)
    started = time.monotonic()
    response = get("/-/ready")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "not ready" and body["failing"] == ["database", "migrations"]
    assert body["checks"]["database"] == {"ok": False, "ms": body["checks"]["database"]["ms"],
                                          "error": "OperationalError"}
    assert body["checks"]["cache"]["ok"] and body["checks"]["broker"]["ok"]
    assert str(port) not in response.content.decode()  # the public answer names no address
    assert time.monotonic() - started < 5


@pytest.mark.django_db
def test_ready_is_503_while_a_migration_is_not_applied(monkeypatch):
    monkeypatch.setattr(probes, "expected_migrations",
                        lambda: frozenset({("games", "9999_not_yet_applied")}))
    response = get("/-/ready")
    assert response.status_code == 503
    assert response.json()["failing"] == ["migrations"]
    assert response.json()["checks"]["migrations"]["error"] == "MigrationsMissing"


@pytest.mark.django_db
def test_ready_names_an_unreachable_broker_and_cache(settings, monkeypatch):
    port = closed_port()
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{port}/0"
    monkeypatch.setattr(readiness, "caches", {"default": RedisCache(f"redis://127.0.0.1:{port}/0", {})})
    response = get("/-/ready")
    body = response.json()
    assert response.status_code == 503
    assert body["failing"] == ["broker", "cache"]
    assert body["checks"]["database"]["ok"] and body["checks"]["migrations"]["ok"]


@pytest.mark.django_db
def test_ready_with_the_real_broker_and_cache(settings, redis_url, redis_cache):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = redis_url
    response = get("/-/ready")
    assert response.status_code == 200, response.json()


@pytest.mark.django_db
def test_a_check_that_hangs_is_a_timeout_within_the_deadline(settings, monkeypatch):
    settings.READINESS_TIMEOUT_SECONDS = 0.3
    monkeypatch.setattr(readiness, "check_broker", lambda timeout: time.sleep(2))
    started = time.monotonic()
    response = get("/-/ready")
    assert time.monotonic() - started < 1.5
    assert response.status_code == 503
    assert response.json()["checks"]["broker"] == {"ok": False, "error": "timeout"}


@pytest.mark.django_db
def test_an_answer_is_reused_within_the_cache_seconds(settings, monkeypatch):
    settings.READINESS_CACHE_SECONDS = 60
    runs = []
    real = readiness.run_checks
    monkeypatch.setattr(readiness, "run_checks", lambda: runs.append(1) or real())
    assert [get("/-/ready").status_code for _ in range(3)] == [200, 200, 200]
    assert len(runs) == 1


def test_probes_answer_only_get_and_head():
    assert Client().post("/-/alive").status_code == 405
    assert Client().head("/-/alive").status_code == 200


def test_the_body_is_json_with_the_checks_in_order(monkeypatch):
    monkeypatch.setattr(readiness, "run_checks", lambda: {
        "database": {"ok": True, "ms": 1.0}, "migrations": {"ok": True, "ms": 1.0},
        "broker": {"ok": False, "ms": 3.0, "error": "OperationalError"}, "cache": {"ok": True, "ms": 0.1}})
    response = get("/-/ready")
    assert response.status_code == 503
    assert json.loads(response.content)["failing"] == ["broker"]
