"""Celery tasks: thin wrappers that call the settlement service."""

from celery import shared_task

from settlement.services import settlement_run


@shared_task(name="settlement.settle_rounds")
def settle_rounds(round_ids: list) -> int:
    """Settle the given rounds (those still DEALT); returns how many were settled."""
    batch = settlement_run(round_ids=round_ids)
    return batch.rounds if batch else 0


@shared_task(name="settlement.sweep")
def sweep() -> int:
    """Settle every DEALT round left behind, batch after batch; safe to run at any time."""
    settled = 0
    while (batch := settlement_run()) is not None:
        settled += batch.rounds
    return settled
