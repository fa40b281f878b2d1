"""Where events turn into settlement work: each enqueues a task (the tasks call the services)."""

from games.models import Round
from games.signals import round_dealt
from settlement.signals import sweep_requested
from settlement.tasks import settle_rounds, sweep


def settle_dealt_rounds(sender, round_ids, **kwargs):
    settle_rounds.delay(list(round_ids))


def start_sweep(sender, **kwargs):
    sweep.delay()


def connect():
    round_dealt.connect(settle_dealt_rounds, sender=Round, dispatch_uid="settlement.settle_dealt_rounds")
    sweep_requested.connect(start_sweep, dispatch_uid="settlement.start_sweep")
