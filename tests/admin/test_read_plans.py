"""backoffice.read_plans: a safe request's view runs no prepared statement, so that each list is planned
for its own filter; the game server's lookups by key and every write still run prepared."""

import pytest
from django.db import connection
from django.urls import resolve, reverse

from backoffice.read_plans import ReadsPlannedForTheirValuesMiddleware, reads_prepared
from tests.conftest import prepared_runs

pytestmark = pytest.mark.usefixtures("prepared_at_first_run")
MIDDLEWARE_PATH = f"{ReadsPlannedForTheirValuesMiddleware.__module__}.{ReadsPlannedForTheirValuesMiddleware.__name__}"


def runs_after(request, marker: str) -> tuple[int, int]:
    """The statements on ``marker``'s table that ``request()`` prepared, and the prepared runs it made."""
    before = prepared_runs(marker)
    response = request()
    assert response.status_code in (200, 201), response.content
    after = prepared_runs(marker)
    return after[0] - before[0], after[1] - before[1]


def test_an_admin_list_runs_no_prepared_statement(as_admin, game):
    changelist = reverse("admin:audit_auditevent_changelist") + "?action__exact=game.created"
    assert runs_after(lambda: as_admin.get(changelist), '"games_auditevent"') == (0, 0)
    assert connection.connection.prepare_threshold == 0  # the connection prepares again after the request


def test_without_the_middleware_the_same_list_runs_prepared(as_admin, game, settings):
    settings.MIDDLEWARE = [name for name in settings.MIDDLEWARE if name != MIDDLEWARE_PATH]
    changelist = reverse("admin:audit_auditevent_changelist") + "?action__exact=game.created"
    assert runs_after(lambda: as_admin.get(changelist), '"games_auditevent"')[1] >= 1


def test_an_api_list_runs_no_prepared_statement(api_as, administrator, game):
    client = api_as(administrator)
    response = lambda: client.get("/api/v1/audit/events/", {"action": "game.created"})  # noqa: E731
    assert runs_after(response, '"games_auditevent"') == (0, 0)


def test_a_game_servers_lookup_by_key_runs_prepared(api_as, integration, game):
    client = api_as(integration)
    assert runs_after(lambda: client.get(f"/api/v1/games/{game.slug}/"), '"games_gameinstance"')[1] >= 1


def test_a_write_runs_prepared(api_as, integration, game):
    client = api_as(integration)
    assert runs_after(lambda: client.post(f"/api/v1/games/{game.slug}/rounds/"), '"games_round"')[1] >= 1


@pytest.mark.parametrize(("path", "prepared"), [
    ("/api/v1/games/main-table/", True), ("/api/v1/rounds/7/", True), ("/api/v1/rounds/7/verify/", True),
    ("/api/v1/bets/7/", True), ("/api/v1/accounts/player-1/", True),
    ("/api/v1/bets/", False), ("/api/v1/rounds/", False), ("/api/v1/accounts/player-1/ledger/", False),
    ("/api/v1/audit/head/", False), ("/admin/games/bet/", False), ("/admin/", False),
])
def test_only_a_game_servers_lookups_by_key_run_prepared(path, prepared):
    assert reads_prepared(resolve(path).func) is prepared
