"""Only one Celery beat runs at a time: two real ``celery beat`` processes on the test database and
the tests' Redis; the second waits for the first one's lock and takes over when it dies."""

import os
import re
import signal
import subprocess
import sys
from contextlib import suppress

import pytest
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from tests.settlement.workers import PROJECT_DIR, database_url, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

SENT = re.compile(r"Sending due task beat-lock-probe")


class Beat:
    def __init__(self, name: str, tmp_path, broker_url: str, scheduler: str | None):
        self.log_path = tmp_path / f"{name}.log"
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed by stop()
        command = [sys.executable, "-m", "celery", "-A", "baccarat_site", "beat", "--loglevel=INFO",
                   "--pidfile=", f"--schedule={tmp_path / name}"]
        if scheduler:
            command.append(f"--scheduler={scheduler}")
        environment = {**os.environ, "DATABASE_URL": database_url(f"test-{name}"), "CELERY_BROKER_URL": broker_url,
                       "CELERY_BEAT_LOCK_RETRY_SECONDS": "0.2", "DJANGO_SETTINGS_MODULE": "baccarat_site.settings",
                       "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(command, cwd=PROJECT_DIR, env=environment, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def sent(self) -> int:
        return len(SENT.findall(self.log()))

    def stop(self, sig=signal.SIGKILL) -> None:
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)
        self.process.wait(timeout=10)
        self._log.close()


@pytest.fixture
def beats(postgres, redis_url, tmp_path):
    started = []

    def start(name, scheduler=None):
        beat = Beat(name, tmp_path, redis_url, scheduler)
        started.append(beat)
        return beat

    # A task due every second, whose sending each beat logs (the broker only stores it: no worker runs).
    every_second, _ = IntervalSchedule.objects.get_or_create(every=1, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.create(name="beat-lock-probe", task="approvals.expire", interval=every_second)
    yield start
    for beat in started:
        if beat.process.poll() is None:
            beat.stop()


def test_a_second_beat_waits_for_the_first_and_takes_over_when_it_dies(beats):
    first = beats("beat1")
    wait_for(lambda: first.sent() >= 2, 60, f"the first beat to send the probe task:\n{first.log()}")
    second = beats("beat2")
    wait_for(lambda: "waiting" in second.log(), 60, "the second beat to wait for the lock")
    sent_by_first = first.sent()
    wait_for(lambda: first.sent() >= sent_by_first + 3, 30, "the first beat to go on sending")
    assert second.sent() == 0, second.log()  # it waited the whole time: nothing sent twice
    assert second.process.poll() is None

    first.stop(signal.SIGKILL)  # its session ends with it, and the lock with the session
    wait_for(lambda: second.sent() >= 2, 60, f"the second beat to take over:\n{second.log()}")
    assert "beat lock taken after" in second.log()


def test_without_the_lock_two_beats_both_send(beats):
    """The same two beats on django_celery_beat's own scheduler send every task twice (what the lock prevents)."""
    plain = "django_celery_beat.schedulers:DatabaseScheduler"
    first, second = beats("plain1", plain), beats("plain2", plain)
    wait_for(lambda: first.sent() >= 2 and second.sent() >= 2, 60, "both beats to send the probe task")


@pytest.mark.django_db(transaction=False)
def test_behind_a_transaction_pooler_the_lock_is_taken_on_the_direct_connection(settings):
    from django.core.exceptions import ImproperlyConfigured

    from baccarat_site.beat import lock_conninfo

    settings.DATABASE_POOLER, settings.DATABASE_LISTEN_URL = "transaction", ""
    with pytest.raises(ImproperlyConfigured, match="DATABASE_LISTEN_URL"):
        lock_conninfo()  # a session's lock through the pooler would lock nothing
    settings.DATABASE_LISTEN_URL = "postgres://app@db.internal:5432/baccarat"
    assert {key: lock_conninfo()[key] for key in ("host", "port", "dbname", "user")} == {
        "host": "db.internal", "port": 5432, "dbname": "baccarat", "user": "app"}
