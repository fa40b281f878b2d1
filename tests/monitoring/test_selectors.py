"""The selectors the metrics read take ``using=``: each runs only on the alias it is given (a test
mirror of the default database as a read replica would be, as tests/test_selectors_using.py sets up)."""

import pytest
from django.db import DEFAULT_DB_ALIAS

from alerts import selectors as alert_selectors
from approvals import selectors as approval_selectors
from audit import selectors as audit_selectors
from games import services as game_services
from settlement import selectors as settlement_selectors
from tests.test_selectors_using import REPLICA, read_on_replica, replica, replica_alias  # noqa: F401 - fixtures
from webhooks import selectors as webhook_selectors

pytestmark = pytest.mark.django_db(transaction=True, databases=[DEFAULT_DB_ALIAS, REPLICA])


def test_the_metrics_selectors_read_the_alias_they_are_given(game, integration, funded_account):
    funded_account("p0", "100.00")
    dealt = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.bet_place(round_id=dealt.pk, account_external_id="p0", bet_type="PLAYER", stake="1.00",
                            idempotency_key="k", client=integration)
    game_services.round_deal(round_id=dealt.pk, actor=integration)  # settled at once (in-process tasks)
    backlog = read_on_replica(settlement_selectors.settlement_backlog)
    assert (backlog["waiting"], backlog["for_operators"], backlog["held_bets"]) == (0, 0, 0)
    times = read_on_replica(settlement_selectors.round_settlement_times, [dealt.pk])
    assert len(times) == 1 and times[0][1] >= times[0][0]
    assert read_on_replica(audit_selectors.audit_pending_summary)["count"] == 0  # sequenced on commit
    assert read_on_replica(webhook_selectors.delivery_backlog) == {"pending": 0, "failed": 0}
    assert read_on_replica(approval_selectors.approvals_pending_count) == 0
    assert set(read_on_replica(alert_selectors.alerts_open_by_kind).values()) == {0}
