from django.apps import AppConfig


class AuditConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "audit"
    verbose_name = "Audit trail"

    def ready(self):
        from audit import signals, task_context

        signals.connect()
        task_context.connect()
