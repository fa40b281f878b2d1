"""Actions taken through the services from the admin (adjustments, voids, rotations) are in the admin's
own log, so the index's "Recent actions" and each object's change log show them."""

from django.contrib.admin.models import CHANGE, LogEntry

from games.models import GameInstance
from tests.admin.helpers import admin_url


def test_adjustments_voids_and_rotations_show_under_recent_actions(as_operator, operator, play, game, player):
    round_ = play(deal=False)
    as_operator.post(admin_url(player, "adjust"), {"amount": "25.00", "reason": "Goodwill", "apply": "1"})
    as_operator.post(admin_url(round_, "void"), {"reason": "Misdeal"})
    as_operator.post(admin_url(game, "rotate_seed"), {"client_seed": "", "reason": "Quarterly", "apply": "1"})

    entries = {(entry.content_type.model, entry.object_id): entry.get_change_message()
               for entry in LogEntry.objects.filter(user=operator, action_flag=CHANGE)}
    assert "Goodwill" in entries[("account", str(player.pk))] and "25.00" in entries[("account", str(player.pk))]
    assert entries[("round", str(round_.pk))] == "Voided, bets refunded: Misdeal"
    assert entries[("gameinstance", str(game.pk))].startswith("Seed pair rotated")
    assert entries[("gameinstance", str(game.pk))].endswith(": Quarterly")

    index = as_operator.get("/admin/").content.decode()
    assert index.count('class="changelink"') >= 3
    assert str(player) in index and str(GameInstance.objects.get(pk=game.pk)) in index
