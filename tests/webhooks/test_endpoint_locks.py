"""An endpoint's change locks its row only against other changes, on the real PostgreSQL: events
for it are recorded and its deliveries claimed meanwhile."""

import time

import pytest
from django.db import transaction

from tests.races import held_open
from webhooks import services
from webhooks.models import Delivery

pytestmark = pytest.mark.services

HELD_SECONDS = 6


@pytest.mark.parametrize("change", [
    lambda hook, actor: services.endpoint_update(endpoint_id=hook.pk, actor=actor, changes={"description": "night"}),
    lambda hook, actor: services.endpoint_rotate_secret(endpoint_id=hook.pk, actor=actor),
])
def test_changing_an_endpoint_holds_up_no_event_for_it_nor_its_deliveries(postgres, endpoint, integration, change,
                                                                           deliveries_left_for_a_worker):
    hook, _secret = endpoint(("round.voided",))
    with held_open(lambda: change(hook, integration), HELD_SECONDS):
        started = time.monotonic()
        with transaction.atomic():  # as a settlement batch or a void records its events
            assert services.events_record("round.voided", [{"round": 1}]) == 1
        recorded = time.monotonic() - started
        delivery = Delivery.objects.get(endpoint=hook)
        claimed = services._claim(delivery.pk)
    assert recorded < HELD_SECONDS / 2, recorded
    assert claimed is not None and (claimed.pk, claimed.attempts) == (delivery.pk, 1)
