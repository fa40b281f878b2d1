from django.apps import AppConfig
from django.conf import settings


class MonitoringConfig(AppConfig):
    """Health, readiness and metrics: reads every app, and no app imports it."""

    name = "monitoring"

    def ready(self):
        if settings.METRICS_ENABLED:
            from monitoring import receivers

            receivers.connect()
