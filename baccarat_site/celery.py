import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "baccarat_site.settings")

app = Celery("baccarat_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def keep_django_logging(**kwargs) -> None:
    """Workers and beat keep the LOGGING setting (Django set it up) instead of Celery's own text format,
    so every line they write is JSON (docs/operations/logging.md)."""


def json_from_the_start(sender=None, instance=None, **kwargs) -> None:
    """Before the worker checks its privileges (a warning as root) and prints its banner (text, not a
    log line): the LOGGING setting already, warnings through it, and no banner."""
    from django.conf import settings

    from audit.log_lines import configure

    configure(settings.LOGGING)
    instance.quiet = True


# Read from the environment as settings.LOG_FORMAT is: this module is imported before the settings are.
if os.environ.get("LOG_FORMAT", "plain").strip().lower() == "json":
    signals.setup_logging.connect(keep_django_logging, weak=False)
    signals.celeryd_init.connect(json_from_the_start, weak=False)
