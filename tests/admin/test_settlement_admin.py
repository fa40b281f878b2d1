"""Settlement batches in the admin: read-only, under the settlement queue, with a sweep button."""

import pytest

from audit.models import AuditEvent
from games import services as game_services
from games.models import Round
from settlement.models import SettlementBatch
from tests.admin.helpers import admin_url

pytestmark = pytest.mark.django_db


def test_settlement_batches_are_read_only(as_admin, play, player):
    play(bets=[(player, "BANKER", "10.00")])
    batch = SettlementBatch.objects.get()

    page = as_admin.get(admin_url(batch, "change"))
    assert page.status_code == 200
    assert admin_url(Round.objects.get(pk=batch.round_ids[0]), "change") in page.content.decode()
    assert as_admin.post(admin_url(batch, "change"), {"worker": "x"}).status_code == 403
    assert as_admin.get(admin_url(batch, "delete")).status_code == 403
    assert as_admin.get(admin_url(SettlementBatch), {"outcome__exact": "ok"}).status_code == 200


def test_the_batch_list_shows_the_queue_and_a_sweep_button(as_operator, as_support, play, player, integration):
    play(bets=[(player, "BANKER", "10.00")])
    waiting = play(bets=[(player, "PLAYER", "5.00")], deal=False)
    # Dealt, but not settled: its settlement runs on commit, and this test's transaction never commits.
    game_services.round_deal(round_id=waiting.pk, actor=integration)

    page = as_operator.get(admin_url(SettlementBatch))

    assert page.status_code == 200
    assert page.context["queue"].waiting_rounds == 1
    assert b"Settlement queue" in page.content and b"Sweep now" in page.content
    support_page = as_support.get(admin_url(SettlementBatch))
    assert support_page.status_code == 200 and b"Sweep now" not in support_page.content
    waiting_list = as_support.get(admin_url(Round), {"settlement": "waiting"}).context["cl"].result_list
    assert list(waiting_list) == [Round.objects.get(pk=waiting.pk)]


def test_the_sweep_button_settles_the_waiting_rounds(as_operator, operator, play, player, integration,
                                                     django_capture_on_commit_callbacks):
    waiting = play(bets=[(player, "PLAYER", "5.00")], deal=False)
    game_services.round_deal(round_id=waiting.pk, actor=integration)

    with django_capture_on_commit_callbacks(execute=True):
        response = as_operator.post(admin_url(SettlementBatch, "sweep"))

    assert response.status_code == 302
    waiting.refresh_from_db()
    assert waiting.status == "SETTLED"
    assert AuditEvent.objects.get(action="settlement.sweep_requested").actor_user == operator


def test_only_a_post_with_the_permission_sweeps(as_operator, as_support):
    assert as_operator.get(admin_url(SettlementBatch, "sweep")).status_code == 405
    assert as_support.post(admin_url(SettlementBatch, "sweep")).status_code == 403
    assert not AuditEvent.objects.filter(action="settlement.sweep_requested").exists()
