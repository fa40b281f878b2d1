"""Settlement's raw-SQL reads and selectors run on the database alias they are given (``using=``),
as the read-replica routing will: here a second alias on the test database, a connection of its
own (so the data is committed first: a transactional test)."""

import pytest
from django.db import DEFAULT_DB_ALIAS, connections
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from settlement import aggregates, reports, selectors
from settlement.models import SettlementBatch
from tests.settlement.test_services import open_round_with_bets

REPLICA = "replica"

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True, databases=[DEFAULT_DB_ALIAS, REPLICA])]


@pytest.fixture(scope="module", autouse=True)
def replica(django_db_setup):
    """The alias ``replica``: the default's settings (the test database, the application role), a
    connection of its own, a test mirror of the default (so the default's flush is the only one).
    Module-scoped, so it exists before each test's databases are checked."""
    default = connections[DEFAULT_DB_ALIAS].settings_dict
    connections.settings[REPLICA] = {**default, "TEST": {**default["TEST"], "MIRROR": DEFAULT_DB_ALIAS}}
    try:
        yield REPLICA
    finally:
        connections[REPLICA].close()
        del connections[REPLICA]
        del connections.settings[REPLICA]


def on_the_replica_only(read):
    """What ``read`` returns, having asserted that it queried the replica and never the default."""
    with CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as default, \
            CaptureQueriesContext(connections[REPLICA]) as replica:
        result = read()
    assert replica.captured_queries and not default.captured_queries, default.captured_queries
    return result


def test_reads_and_selectors_run_on_the_alias_given(postgres, replica, game, integration, funded_account):
    funded_account("a", "100.00")
    funded_account("b", "100.00")
    for _ in range(2):  # settled as their deal commits
        open_round_with_bets(game, integration, [("a", "PLAYER", "2.00"), ("b", "BANKER", "3.00")])
    assert SettlementBatch.objects.count() == 2
    today = timezone.now().date()

    # The ORM, and raw SQL.
    accounts = on_the_replica_only(lambda: reports.active_accounts(game.currency, today, today, using=replica))
    assert accounts == reports.active_accounts(game.currency, today, today) == ({game.pk: 2}, 2)
    checks = on_the_replica_only(lambda: aggregates.check(using=replica))
    assert [(c.label, c.stored, c.computed, c.agrees) for c in checks] == [
        (c.label, c.stored, c.computed, c.agrees) for c in aggregates.check()]
    assert all(c.agrees and c.stored for c in checks)

    # Selectors, and the dashboard over them.
    queue = on_the_replica_only(lambda: selectors.settlement_queue(using=replica))
    assert queue == selectors.settlement_queue()
    assert [batch.pk for batch in queue.recent_batches] == list(
        SettlementBatch.objects.order_by("-id").values_list("pk", flat=True))
    batches = on_the_replica_only(lambda: list(selectors.batch_list(outcome="ok", using=replica)))
    assert batches == queue.recent_batches and all(batch._state.db == replica for batch in batches)
    board = on_the_replica_only(lambda: reports.dashboard(start=today, end=today, currency=game.currency,
                                                          using=replica))
    assert board.overall == reports.dashboard(start=today, end=today, currency=game.currency).overall
    assert board.overall.rounds == 2 and board.overall.bets == 4 and board.overall.active_accounts == 2
