import pytest

from games import services as game_services
from tests.webhooks.receiver import Receiver
from webhooks import services
from webhooks.receivers import on_deliveries_ready
from webhooks.signals import deliveries_ready


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.stop()


@pytest.fixture
def endpoint(integration, receiver):
    """endpoint(events) registers the receiver for those events; returns (endpoint, secret)."""

    def create(events=("round.voided",)):
        return services.endpoint_create(actor=integration, reason="new receiver",
                                                           owner=integration, url=receiver.url, events=list(events))

    return create


@pytest.fixture
def dealt_round(game, integration, funded_account):
    funded_account("player-1", "100.00")
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.bet_place(round_id=round_.pk, account_external_id="player-1", bet_type="BANKER", stake="10.00",
                            idempotency_key="k1", client=integration)
    return game_services.round_deal(round_id=round_.pk, actor=integration)


@pytest.fixture
def deliveries_left_for_a_worker():
    """Recorded deliveries are not handed to a task: the test claims them as a worker would."""
    deliveries_ready.disconnect(dispatch_uid="webhooks.deliveries_ready")
    yield
    deliveries_ready.connect(on_deliveries_ready, dispatch_uid="webhooks.deliveries_ready")
