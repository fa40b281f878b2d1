"""Configuration writes lock only the rows they change, on the real PostgreSQL: a game checked
against an RTP policy holds the policy FOR SHARE, so games of one policy change side by side while a
change of the policy waits for them."""

import threading
import time
from decimal import Decimal

import pytest
from django.db import connection

from games import services
from games.models import RtpPolicy
from tests.races import held_open

pytestmark = pytest.mark.services

HELD_SECONDS = 6


def test_games_of_one_policy_change_together_and_the_policy_waits_for_them(postgres, game, operator,
                                                                          administrator):
    policy = services.rtp_policy_create(actor=administrator, name="MGA", min_tie_rtp=Decimal("80"))
    other = services.game_create(actor=operator, slug="second-table", name="Second table", min_bet=Decimal("1.00"),
                                 max_bet=Decimal("100.00"))
    for table in (game, other):
        services.game_update(game_id=table.pk, actor=operator, reason="assign", changes={"rtp_policy": policy})
    changed = {}

    def tighten():
        try:
            changed["policy"] = services.rtp_policy_update(policy_id=policy.pk, actor=administrator, reason="audit",
                                                           changes={"min_tie_rtp": Decimal("85")})
        except Exception as error:  # noqa: BLE001 - the test inspects it
            changed["policy"] = error
        finally:
            connection.close()

    update = lambda table: services.game_update(game_id=table.pk, actor=operator, reason="limits",  # noqa: E731
                                                changes={"max_bet": Decimal("500.00")})
    with held_open(lambda: update(game), HELD_SECONDS):
        started = time.monotonic()
        update(other)
        elapsed = time.monotonic() - started
        tightener = threading.Thread(target=tighten)
        tightener.start()
        time.sleep(0.5)
        assert "policy" not in changed  # it waits for the game still being checked against it
    tightener.join(30)
    assert elapsed < HELD_SECONDS / 2, elapsed
    assert isinstance(changed["policy"], RtpPolicy), changed
