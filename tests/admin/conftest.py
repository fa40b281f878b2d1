"""Fixtures of the admin tests: a signed-in Django test client per role, and played rounds."""

import pytest
from django.test import Client

from games import services as game_services
from tests.conftest import verified_login


def client_for(user) -> Client:
    """A client signed in as ``user``, password and second factor (tests.conftest.verified_login)."""
    return verified_login(Client(), user)


@pytest.fixture
def as_operator(operator):
    return client_for(operator)


@pytest.fixture
def as_support(support):
    return client_for(support)


@pytest.fixture
def as_admin(administrator):
    return client_for(administrator)


@pytest.fixture
def as_regulator(regulator):
    return client_for(regulator)


@pytest.fixture
def player(funded_account):
    return funded_account("player-1", "500.00")


@pytest.fixture
def play(game, integration, django_capture_on_commit_callbacks):
    """play(bets=[(account, "BANKER", "10.00"), ...], deal=True) opens a round, bets, deals and settles."""

    def run(bets=(), deal=True, game_=None):
        target = game_ or game
        round_ = game_services.round_open(game_id=target.pk, actor=integration)
        for number, (account, bet_type, stake) in enumerate(bets):
            game_services.bet_place(round_id=round_.pk, account_external_id=account.external_id, bet_type=bet_type,
                                    stake=stake, idempotency_key=f"r{round_.pk}-{number}", client=integration)
        if deal:
            # The settlement task runs when the deal commits; run the on-commit callbacks here.
            with django_capture_on_commit_callbacks(execute=True):
                game_services.round_deal(round_id=round_.pk, actor=integration)
        round_.refresh_from_db()
        return round_

    return run
