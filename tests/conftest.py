"""Shared fixtures: one user per role, a game, funded accounts, API clients."""

import os
import time
from decimal import Decimal

import hypothesis
import pytest
import redis
from django.contrib.auth.models import Group, User
from django.core.cache import caches
from django.db import connection
from django.test import TransactionTestCase
from django.urls import reverse
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.test import APIClient

from apitokens.choices import Scope
from apitokens.services import token_create
from backoffice import second_factor, staff_sessions
from backoffice.roles import STAFF_ROLES, Role
from games import services as game_services
from tests import app_role, pooler
from wallet import services as wallet_services

# Properties are checked, never timed: hypothesis's default 200 ms deadline per example would make a
# slow or busy machine fail a true property.
hypothesis.settings.register_profile("untimed", deadline=None)
hypothesis.settings.load_profile("untimed")

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def service_missing(message: str):
    """Skip when a real service is missing, but fail when REQUIRE_SERVICES=1 (as in CI)."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{message} (REQUIRE_SERVICES=1)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """On PostgreSQL the tests run as the application role (tests/app_role.py); a transactional
    test's flush (TRUNCATE, which the role may not) runs as the owner."""
    flush = TransactionTestCase._fixture_teardown

    def flush_as_owner(test_case):
        with app_role.as_owner():
            flush(test_case)

    with django_db_blocker.unblock():
        app_role.start()
        bouncer = pooler.start()  # DATABASE_POOLER=transaction: through a PgBouncer (tests/pooler.py)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TransactionTestCase, "_fixture_teardown", flush_as_owner)
        yield
    with django_db_blocker.unblock():
        pooler.stop(bouncer)
    app_role.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    """A test marked ``owner`` runs as the tables' owner from before its transaction begins."""
    app_role.login("owner" if item.get_closest_marker("owner") else "app")
    return (yield)


@pytest.fixture
def postgres(transactional_db):
    """The test's data is committed, for other connections and processes to see (the default
    connection is returned).

    The flush after such a test empties every table (as the tables' owner: tests/app_role.py);
    post_migrate then re-creates the content types, permissions and role groups, so later tests
    find their roles.
    """
    from django.db import connection

    return connection


@pytest.fixture
def second_connection(postgres):
    """Another connection to the test database, as another web process would hold one."""
    from django.db import DEFAULT_DB_ALIAS, connections

    wrapper = connections.create_connection(DEFAULT_DB_ALIAS)
    wrapper.ensure_connection()
    yield wrapper
    wrapper.close()


@pytest.fixture
def redis_url():
    """The real Redis of this machine, on a database of its own, emptied before and after."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.RedisError as error:
        service_missing(f"needs Redis at {REDIS_URL}: {error}")
    client.flushdb()
    yield REDIS_URL
    client.flushdb()


@pytest.fixture
def broker(postgres, redis_url):
    """The project's Celery app sends to the real Redis for this test (no longer in-process), then is put back."""
    from baccarat_site.celery import app
    from tests.settlement.workers import reset_broker_pools

    saved = {"broker_url": app.conf.broker_url, "task_always_eager": app.conf.task_always_eager}
    reset_broker_pools(app)
    app.conf.update(broker_url=redis_url, task_always_eager=False)
    yield app
    reset_broker_pools(app)
    app.conf.update(saved)


@pytest.fixture
def workers(broker, redis_url, tmp_path):
    """Real Celery worker processes on the test's Redis (tests.settlement.workers.Workers), stopped after."""
    from tests.settlement.workers import Workers

    pool = Workers(tmp_path, redis_url)
    yield pool
    pool.stop_all()


@pytest.fixture
def redis_cache(settings, redis_url):
    """The production cache (dbutils.redis_cache) on the tests' Redis database."""
    settings.CACHES = {"default": {"BACKEND": "dbutils.redis_cache.RedisCache", "LOCATION": redis_url}}
    cache = caches["default"]
    yield cache
    cache.close()


@pytest.fixture
def redis_commands(redis_cache, monkeypatch):
    """The commands the Redis cache sends, by name, as its client sends them."""
    sent = []
    client = redis_cache._cache.get_client(write=True)
    original = client.connection_pool.connection_class.send_command

    def counted(connection, *args, **kwargs):
        sent.append(str(args[0]).upper())
        return original(connection, *args, **kwargs)
    monkeypatch.setattr(client.connection_pool.connection_class, "send_command", counted)
    return sent


@pytest.fixture(autouse=True)
def audit_head_sink(settings, tmp_path):
    """Signed audit heads go to the test's own directory (the sink outside the database)."""
    settings.AUDIT_HEAD_SINK_DIR = str(tmp_path / "audit-heads")
    return tmp_path / "audit-heads"


@pytest.fixture(autouse=True)
def empty_cache():
    """Throttle windows and lock-out counts live in the cache (and a process's batches of counts
    beside it): each test starts with none."""
    from django.core.cache import cache

    from backoffice.api.throttling import batches

    cache.clear()
    batches.clear()
    yield
    cache.clear()
    batches.clear()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Real hashing costs a third of a second per user; the tests need none of its strength."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def make_user(username: str, role: Role | None) -> User:
    user = User.objects.create_user(username=username, password="correct-horse-battery",
                                    is_staff=role in STAFF_ROLES)
    if role is not None:
        user.groups.add(Group.objects.get(name=role.group_name))
    return user


@pytest.fixture
def operator(db):
    return make_user("olivia-operator", Role.OPERATOR)


@pytest.fixture
def support(db):
    return make_user("sam-support", Role.SUPPORT)


@pytest.fixture
def integration(db):
    return make_user("game-server", Role.INTEGRATION)


@pytest.fixture
def administrator(db):
    return make_user("ada-admin", Role.ADMIN)


@pytest.fixture
def regulator(db):
    return make_user("rita-regulator", Role.REGULATOR)


@pytest.fixture
def nobody(db):
    """Authenticated, but in no role."""
    return make_user("nobody", None)


@pytest.fixture
def game(operator):
    return game_services.game_create(
        actor=operator, slug="main-table", name="Main table", min_bet=Decimal("1.00"),
        max_bet=Decimal("1000.00"), client_seed="house-client-seed",
    )


@pytest.fixture
def games_created_at_once(settings):
    """For tests of creating a game itself (its input, its answer): "game.create" left out of
    APPROVAL_ACTIONS, so an active game is created at once (four eyes on it: tests/api/test_approvals.py)."""
    settings.APPROVAL_ACTIONS = [action for action in settings.APPROVAL_ACTIONS if action != "game.create"]


@pytest.fixture
def funded_account(operator):
    """A factory: funded_account("p1", "250.00") creates an account holding that balance."""

    def create(external_id: str = "player-1", balance: str = "500.00", currency: str = "USD"):
        account = wallet_services.account_create(actor=operator, external_id=external_id, currency=currency)
        if Decimal(balance):
            wallet_services.account_adjust(external_id=external_id, actor=operator, amount=balance,
                                               reason="test deposit")
        account.refresh_from_db()
        return account

    return create


def totp_device(user) -> TOTPDevice:
    """The person's confirmed TOTP device (their authenticator app), made once."""
    device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
    return device or TOTPDevice.objects.create(user=user, name="Authenticator app", confirmed=True)


def totp_code(device: TOTPDevice) -> str:
    """The code the person's app shows now, or the next one when now's was used (django-otp takes each
    time step once; its tolerance takes the next one too)."""
    device.refresh_from_db()
    now = int((time.time() - device.t0) // device.step)
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = device.t0 + max(now, device.last_t + 1) * device.step
    return f"{totp.token():0{device.digits}d}"


def verified_login(client, user, *, password: str | None = None, fresh: bool = True):
    """Sign ``client`` (a test or API client) in as ``user`` as the admin's pages leave a session after
    the password and the second factor: a real confirmed TOTP device (made before the log-in, whose
    session is stamped with it), verified in the session. With ``password`` the log-in goes through
    the admin's log-in page (its lock-outs, signals and authentication log); ``fresh=False``: the code
    was entered longer ago than STEP_UP_MINUTES. Returns the client."""
    device = totp_device(user)
    if password is None:
        client.force_login(user)
    else:
        response = client.post(reverse("admin:login"), {"username": user.get_username(), "password": password})
        assert response.status_code == 302, response.content
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    session[second_factor.VERIFIED_AT] = staff_sessions.clock() - (0 if fresh else 86400)
    session.save()
    return client


def log_in_through_pages(client, user, *, password: str = "correct-horse-battery", next_page: str = "/admin/"):
    """The admin's log-in as a person goes through it: the password on the log-in page, then the code
    of their authenticator app (computed from their device's secret) on the second factor's page.
    Returns the last response (a redirect to ``next_page``)."""
    device = totp_device(user)
    response = client.post(reverse("admin:login"), {"username": user.get_username(), "password": password,
                                                    "next": next_page})
    assert response.status_code == 302, response.content
    response = client.post(reverse("admin:second_factor"), {"code": totp_code(device), "next": next_page})
    assert (response.status_code, response["Location"]) == (302, next_page), response.content
    return response


def api_client_for(user, scopes=(Scope.WRITE,), **token_options) -> APIClient:
    """A client sending a new token of ``user`` (everything the role may do unless ``scopes`` say
    otherwise); the token's row is ``client.api_token``, the token itself ``client.api_token_secret``."""
    client = APIClient()
    if user is not None:
        client.api_token, client.api_token_secret = token_create(owner=user, actor="system:tests", scopes=scopes,
                                                                 **token_options)
        client.credentials(HTTP_AUTHORIZATION=f"Token {client.api_token_secret}")
    return client


@pytest.fixture
def api_as():
    """api_as(user) is an API client authenticated by that user's token; api_as(None) is anonymous."""
    return api_client_for


@pytest.fixture
def prepared_at_first_run(db):
    """This connection prepares every statement at its first run (psycopg's prepare_threshold 0)."""
    connection.ensure_connection()
    driver = connection.connection
    before = driver.prepare_threshold, driver.prepared_max
    driver.prepare_threshold, driver.prepared_max = 0, None  # none forgotten while counted
    yield
    driver.prepare_threshold, driver.prepared_max = before


def prepared_runs(marker: str) -> tuple[int, int]:
    """The statements prepared on this connection whose text holds ``marker``, and their runs."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), COALESCE(sum(generic_plans + custom_plans), 0) FROM pg_prepared_statements "
                       "WHERE strpos(statement, %s) > 0", [marker])
        return tuple(int(value) for value in cursor.fetchone())
