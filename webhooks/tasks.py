from celery import shared_task

from webhooks.services import deliveries_due, delivery_attempt


@shared_task(name="webhooks.deliver", acks_late=True)
def deliver(delivery_id: int):
    return delivery_attempt(delivery_id)


@shared_task(name="webhooks.sweep")
def sweep() -> int:
    """Hand every due delivery to the workers: retries after their backoff, and any whose message was lost."""
    due = deliveries_due()
    for delivery_id in due:
        deliver.delay(delivery_id)
    return len(due)
