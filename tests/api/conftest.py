"""Fixtures of the API tests: clients per role, an open round, and a snapshot of everything
a rejected request must leave untouched."""

from contextlib import contextmanager

import pytest

from games import services as game_services
from tests.api.helpers import Snapshot


@pytest.fixture
def as_operator(api_as, operator):
    return api_as(operator)


@pytest.fixture
def as_support(api_as, support):
    return api_as(support)


@pytest.fixture
def as_integration(api_as, integration):
    return api_as(integration)


@pytest.fixture
def as_admin(api_as, administrator):
    return api_as(administrator)


@pytest.fixture
def open_round(game, integration):
    return game_services.round_open(game_id=game.pk, actor=integration)


@pytest.fixture
def player(funded_account):
    """An account "player-1" holding 500.00 USD."""
    return funded_account("player-1", "500.00")


@pytest.fixture
def unchanged(db):
    """``with unchanged(): <request>`` asserts the request wrote nothing at all."""
    @contextmanager
    def check():
        before = Snapshot.take()
        yield
        assert Snapshot.take() == before, "a rejected request must write nothing"

    return check
