"""Where events turn into settlement work: each enqueues a task (the tasks call the services)."""

from contextlib import contextmanager

from games.models import Round
from games.signals import round_dealt
from settlement.signals import sweep_requested
from settlement.tasks import settle_rounds, sweep

SETTLE_DEALT_ROUNDS = "settlement.settle_dealt_rounds"


def settle_dealt_rounds(sender, round_ids, **kwargs):
    settle_rounds.delay(list(round_ids))


def start_sweep(sender, **kwargs):
    sweep.delay()


def connect():
    round_dealt.connect(settle_dealt_rounds, sender=Round, dispatch_uid=SETTLE_DEALT_ROUNDS)
    sweep_requested.connect(start_sweep, dispatch_uid="settlement.start_sweep")


@contextmanager
def dealt_rounds_left_to_the_sweep():
    """While inside, a dealt round enqueues no settlement of its own: the caller runs the sweep
    (seed_demo settles its rounds a session at a time). Not for a server's threads: a signal's
    receivers are the whole process's."""
    round_dealt.disconnect(sender=Round, dispatch_uid=SETTLE_DEALT_ROUNDS)
    try:
        yield
    finally:
        round_dealt.connect(settle_dealt_rounds, sender=Round, dispatch_uid=SETTLE_DEALT_ROUNDS)
