"""Sessions that end (backoffice.staff_sessions), in the admin and for the API called with a session:
a new key at log-in, an idle timeout, an absolute lifetime, and every session of a person ended when
their password, role or staff status changes."""

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from backoffice import staff_sessions
from backoffice.roles import Role
from tests.conftest import verified_login

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery"
ADMIN_INDEX = "/admin/"
API_READ = "/api/v1/games/"


class Clock:
    def __init__(self, start: float):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def forward(self, *, minutes: float = 0, hours: float = 0) -> None:
        self.now += minutes * 60 + hours * 3600


@pytest.fixture
def clock(monkeypatch):
    moved = Clock(staff_sessions.clock())
    monkeypatch.setattr(staff_sessions, "clock", moved)
    return moved


def signed_in(username: str) -> Client:
    """Through the log-in page, and the second factor (tests.conftest.verified_login)."""
    return verified_login(Client(), User.objects.get(username=username), password=PASSWORD)


def assert_signed_out(client: Client) -> None:
    response = client.get(ADMIN_INDEX)
    assert response.status_code == 302 and reverse("admin:login") in response["Location"]


def assert_api_refused(client: Client) -> None:
    response = client.get(API_READ)
    assert response.status_code == 401, response.content


def test_the_defaults(settings):
    assert (settings.STAFF_SESSION_IDLE_MINUTES, settings.STAFF_SESSION_HOURS) == (30, 12)
    assert settings.SESSION_COOKIE_AGE == 12 * 3600


def test_log_in_gives_a_new_session_key(client, operator):
    planted = SessionStore()
    planted["seen_before_log_in"] = True
    planted.create()
    client.cookies[settings.SESSION_COOKIE_NAME] = planted.session_key

    response = client.post(reverse("admin:login"), {"username": "olivia-operator", "password": PASSWORD,
                                                    "next": ADMIN_INDEX})

    assert response.status_code == 302
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert key and key != planted.session_key
    assert not Session.objects.filter(session_key=planted.session_key).exists()
    assert client.get(ADMIN_INDEX)["Location"].startswith(reverse("admin:second_factor"))  # the code comes next


def test_the_session_s_cookie_and_row_end_with_its_absolute_lifetime(operator, clock):
    client = signed_in("olivia-operator")
    session = Session.objects.get(session_key=client.cookies[settings.SESSION_COOKIE_NAME].value)
    lifetime = (session.expire_date.timestamp() - clock.now) / 3600
    assert 11.99 < lifetime <= 12.001


def test_an_idle_session_ends_after_30_minutes(operator, clock):
    client = signed_in("olivia-operator")
    for _ in range(4):  # a request every 29 minutes keeps it
        clock.forward(minutes=29)
        assert client.get(ADMIN_INDEX).status_code == 200
        assert client.get(API_READ).status_code == 200
    key = client.cookies[settings.SESSION_COOKIE_NAME].value

    clock.forward(minutes=30)

    assert_api_refused(client)
    assert_signed_out(client)
    assert not Session.objects.filter(session_key=key).exists()


def test_an_idle_session_is_refused_by_the_api_as_by_the_admin(operator, clock):
    client = signed_in("olivia-operator")
    clock.forward(minutes=31)
    assert_api_refused(client)
    assert_signed_out(client)


def test_a_session_ends_12_hours_after_log_in_however_busy(operator, clock):
    client = signed_in("olivia-operator")
    for _ in range(28):  # 11 h 40 min of requests every 25 minutes
        clock.forward(minutes=25)
        assert client.get(API_READ).status_code == 200
    assert client.get(ADMIN_INDEX).status_code == 200

    clock.forward(minutes=20)  # 12 h after log-in

    assert_signed_out(client)


def test_the_limits_are_settings(operator, clock, settings):
    settings.STAFF_SESSION_IDLE_MINUTES = 5
    settings.STAFF_SESSION_HOURS = 1
    client = signed_in("olivia-operator")
    clock.forward(minutes=4)
    assert client.get(ADMIN_INDEX).status_code == 200
    clock.forward(minutes=5)
    assert_signed_out(client)
    client = signed_in("olivia-operator")
    for _ in range(14):
        clock.forward(minutes=4)
        assert client.get(ADMIN_INDEX).status_code == 200
    clock.forward(minutes=4)  # 60 minutes
    assert_signed_out(client)


def test_a_role_change_ends_every_session_of_that_person_only(operator, support):
    desk, laptop, other = signed_in("olivia-operator"), signed_in("olivia-operator"), signed_in("sam-support")
    assert desk.get(ADMIN_INDEX).status_code == laptop.get(API_READ).status_code == 200

    operator.groups.set([Group.objects.get(name=Role.SUPPORT.group_name)])

    assert_signed_out(desk)
    assert_api_refused(laptop)
    assert other.get(ADMIN_INDEX).status_code == 200
    again = signed_in("olivia-operator")  # the new role, in a new session
    assert again.get(API_READ).status_code == 200


def test_a_role_change_in_the_admin_ends_the_person_s_sessions(operator, administrator):
    desk = signed_in("olivia-operator")
    admin = signed_in("ada-admin")
    form = admin.get(reverse("admin:auth_user_change", args=[operator.pk])).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None and name != "groups"}
    data.update({"groups": [Group.objects.get(name=Role.REGULATOR.group_name).pk],
                 "date_joined_0": operator.date_joined.strftime("%Y-%m-%d"),
                 "date_joined_1": operator.date_joined.strftime("%H:%M:%S"), "user_permissions": []})
    data.pop("last_login", None)
    data.pop("date_joined", None)
    response = admin.post(reverse("admin:auth_user_change", args=[operator.pk]), data)
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response

    assert_signed_out(desk)
    assert admin.get(ADMIN_INDEX).status_code == 200


def test_losing_staff_status_ends_every_session(operator):
    client = signed_in("olivia-operator")
    operator.is_staff = False
    operator.save()
    assert_api_refused(client)


def test_a_password_change_ends_every_other_session(operator):
    desk, laptop = signed_in("olivia-operator"), signed_in("olivia-operator")
    response = desk.post(reverse("admin:password_change"), {
        "old_password": PASSWORD, "new_password1": "a-new-long-pass-phrase", "new_password2": "a-new-long-pass-phrase"})
    assert response.status_code == 302

    assert desk.get(ADMIN_INDEX).status_code == 200  # the session it was changed from, as Django does
    assert_signed_out(laptop)


def test_a_password_set_by_someone_else_ends_every_session(operator):
    desk = signed_in("olivia-operator")
    operator.set_password("a-new-long-pass-phrase")
    operator.save()
    assert_api_refused(desk)


def test_a_session_made_before_these_rules_ends(operator):
    client = signed_in("olivia-operator")
    session = SessionStore(session_key=client.cookies[settings.SESSION_COOKIE_NAME].value)
    for key in (staff_sessions.STARTED, staff_sessions.SEEN, staff_sessions.GRANTS):
        del session[key]
    session.save()
    assert_signed_out(client)


def test_a_token_request_reads_no_session(api_as, operator):
    client = api_as(operator)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(API_READ)
    assert response.status_code == 200 and not response.cookies
    assert not any("django_session" in query["sql"] for query in queries.captured_queries)
