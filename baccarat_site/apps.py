from django.contrib.admin.apps import AdminConfig


class BackOfficeAdminConfig(AdminConfig):
    """Django's admin, on the back-office site (backoffice.admin.site.BackOfficeAdminSite)."""

    default_site = "backoffice.admin.site.BackOfficeAdminSite"

    def ready(self):
        super().ready()
        from baccarat_site.receivers import record_locked_out
        from backoffice.lockout import login_locked_out

        login_locked_out.connect(record_locked_out, dispatch_uid="baccarat_site.audit_locked_out")
