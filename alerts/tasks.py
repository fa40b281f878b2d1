from celery import shared_task

from alerts.services import alerts_check


@shared_task(name="alerts.check")
def run_checks(names=None) -> dict:
    return {name: list(counts) for name, counts in alerts_check(names).items()}
