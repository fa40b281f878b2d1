"""Lists and the recall cost a fixed number of queries, whatever the page holds, and never COUNT."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from games import services
from tests.api.helpers import API

pytestmark = pytest.mark.django_db


@pytest.fixture
def busy_game(game, integration, operator, funded_account):
    rounds = []
    for player in range(4):
        funded_account(f"p{player}", "100.00")
    for index in range(6):
        round_ = services.round_open(game_id=game.pk, actor=integration)
        for player in range(4):
            services.bet_place(round_id=round_.pk, account_external_id=f"p{player}", bet_type="PLAYER",
                               stake="1.00", idempotency_key=f"{index}-{player}", client=integration)
        services.round_deal(round_id=round_.pk, actor=integration)
        rounds.append(round_)
    services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    return rounds


@pytest.mark.parametrize("path", [
    "/games/", "/rounds/", "/rounds/?status=DEALT&game=main-table", "/games/main-table/rounds/", "/bets/",
    "/bets/?game=main-table&account=p1&status=PENDING", "/accounts/", "/accounts/p1/ledger/",
    "/games/main-table/seeds/", "/rounds/{round}/", "/rounds/{round}/verify/",
])
def test_fixed_query_count_and_no_count(as_support, busy_game, path):
    url = API + path.format(round=busy_game[0].pk)
    with CaptureQueriesContext(connection) as queries:
        response = as_support.get(url)
    assert response.status_code == 200, response.content
    statements = [query["sql"].upper() for query in queries.captured_queries]
    assert not any("COUNT(" in statement for statement in statements), statements
    # Authentication (the token with its user, then the permissions) takes 2; the rest is the page.
    assert len(statements) <= 5, statements
