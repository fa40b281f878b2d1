from django.contrib.admin.apps import AdminConfig


class BackOfficeAdminConfig(AdminConfig):
    """Django's admin, on the back-office site (backoffice.admin.site.BackOfficeAdminSite)."""

    default_site = "backoffice.admin.site.BackOfficeAdminSite"
