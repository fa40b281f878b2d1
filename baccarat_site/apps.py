from django.contrib.admin.apps import AdminConfig


class BackOfficeAdminConfig(AdminConfig):
    """Django's admin, on the back-office site (backoffice.admin.site.BackOfficeAdminSite)."""

    default_site = "backoffice.admin.site.BackOfficeAdminSite"

    def ready(self):
        super().ready()
        from django.contrib import admin
        from django.contrib.auth import get_user_model

        from baccarat_site.receivers import record_locked_out, record_unlocked
        from backoffice.admin.lockouts import add_unlock_action
        from backoffice.lockout import login_locked_out, login_unlocked

        login_locked_out.connect(record_locked_out, dispatch_uid="baccarat_site.audit_locked_out")
        login_unlocked.connect(record_unlocked, dispatch_uid="baccarat_site.audit_unlocked")
        add_unlock_action(admin.site.get_model_admin(get_user_model()))  # registered by django.contrib.auth
