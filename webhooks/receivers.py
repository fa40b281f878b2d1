"""The events that webhooks report, written to the outbox inside the transaction of each change;
and a deactivated user's endpoints disabled in the transaction of its save."""

from django.contrib.auth import get_user_model
from django.db.models.signals import post_save, pre_save

from alerts.signals import alert_opened
from audit.context import signal_actor
from core.currencies import amount_text
from games.choices import BetStatus
from games.engine import dealt_event
from games.models import Bet, Round
from games.signals import round_voided, seeds_revealed
from settlement.signals import held_bet_settled, rounds_settled
from webhooks.choices import EventType
from webhooks.services import endpoints_disable_for_owner, events_record, subscribers
from webhooks.signals import deliveries_ready
from webhooks.tasks import deliver


def round_data(round_: Round) -> dict:
    return {"round": round_.pk, "game": round_.game.slug, "nonce": round_.nonce, "status": round_.status,
            "outcome": round_.outcome, "cards": round_.cards, "player_score": round_.player_score,
            "banker_score": round_.banker_score, "server_seed_hash": round_.seed_pair.server_seed_hash,
            "client_seed": round_.seed_pair.client_seed}


def bet_data(bet: Bet) -> dict:
    """A settled bet, with the paytable it settled on (a side bet's own; null for a main bet, which
    settles on its multiplier) and its bet type's event on the round, which the paytable priced."""
    currency = bet.account.currency  # the amounts at its places (core.currencies), as the API writes them
    round_ = bet.round
    return {"bet": bet.pk, "round": bet.round_id, "account": bet.account.external_id, "bet_type": bet.bet_type,
            "stake": amount_text(bet.stake, currency), "multiplier": str(bet.multiplier), "paytable": bet.paytable,
            "event": dealt_event(bet.bet_type, round_.cards, round_.player_cards, round_.banker_cards),
            "status": bet.status, "payout": None if bet.payout is None else amount_text(bet.payout, currency),
            "currency": currency}


def on_rounds_settled(sender, round_ids, **kwargs):
    if subscribers(EventType.ROUND_SETTLED):
        rounds = Round.objects.filter(pk__in=round_ids).select_related("game", "seed_pair").order_by("pk")
        events_record(EventType.ROUND_SETTLED, [round_data(round_) for round_ in rounds])
    if subscribers(EventType.BET_SETTLED):
        # A held bet is not settled yet: its event is written when an operator settles it.
        bets = (Bet.objects.filter(round_id__in=round_ids).exclude(status=BetStatus.HELD)
                .select_related("account", "round").order_by("pk"))
        events_record(EventType.BET_SETTLED, [bet_data(bet) for bet in bets])


def on_held_bet_settled(sender, bet, **kwargs):
    if subscribers(EventType.BET_SETTLED):
        events_record(EventType.BET_SETTLED, [bet_data(bet)])


def on_round_voided(sender, round_, **kwargs):
    events_record(EventType.ROUND_VOIDED, [{**round_data(round_), "void_reason": round_.void_reason}])


def on_seeds_revealed(sender, pair, **kwargs):
    # The pair is revealed in this very transaction: its server seed is public once it commits, and a
    # rollback takes this event with it.
    events_record(EventType.SEEDS_REVEALED, [{
        "game": pair.game.slug, "server_seed_hash": pair.server_seed_hash, "server_seed": pair.revealed_server_seed,
        "client_seed": pair.client_seed, "rounds_played": pair.next_nonce}])


def on_alert_opened(sender, alert, **kwargs):
    events_record(EventType.ALERT_OPENED, [{
        "alert": alert.pk, "kind": alert.kind, "key": alert.key, "severity": alert.severity,
        "message": alert.message, "first_seen": alert.first_seen.isoformat()}])


def _saves_is_active(instance, update_fields) -> bool:
    return instance.pk is not None and (update_fields is None or "is_active" in update_fields)


def on_user_saving(sender, instance, update_fields=None, **kwargs):
    """Whether the user was inactive before this save (a reactivation)."""
    instance._webhooks_was_inactive = _saves_is_active(instance, update_fields) and type(instance).objects.filter(
        pk=instance.pk, is_active=False).exists()


def on_user_saved(sender, instance, created, update_fields=None, **kwargs):
    """A user saved inactive (in the admin, by a command, anywhere) has its endpoints disabled and
    their pending deliveries cancelled, in the same transaction. Reactivating turns none back on; it
    disables any left on by a deactivation that bypassed save() (a bulk UPDATE), so none resumes."""
    if created or not _saves_is_active(instance, update_fields):
        return
    if instance.is_active and not getattr(instance, "_webhooks_was_inactive", False):
        return
    what = "reactivated: its webhooks stay off until each endpoint is turned on" if instance.is_active else (
        "deactivated: its webhooks stop")
    endpoints_disable_for_owner(owner=instance, actor=signal_actor("system:user-management"),
                                reason=f"User {instance.get_username()} {what}.")


def on_deliveries_ready(sender, delivery_ids, **kwargs):
    for delivery_id in delivery_ids:
        deliver.delay(delivery_id)


def connect() -> None:
    rounds_settled.connect(on_rounds_settled, dispatch_uid="webhooks.rounds_settled")
    held_bet_settled.connect(on_held_bet_settled, dispatch_uid="webhooks.held_bet_settled")
    round_voided.connect(on_round_voided, dispatch_uid="webhooks.round_voided")
    seeds_revealed.connect(on_seeds_revealed, dispatch_uid="webhooks.seeds_revealed")
    alert_opened.connect(on_alert_opened, dispatch_uid="webhooks.alert_opened")
    deliveries_ready.connect(on_deliveries_ready, dispatch_uid="webhooks.deliveries_ready")
    pre_save.connect(on_user_saving, sender=get_user_model(), dispatch_uid="webhooks.user_saving")
    post_save.connect(on_user_saved, sender=get_user_model(), dispatch_uid="webhooks.user_saved")


