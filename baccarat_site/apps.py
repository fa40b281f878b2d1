from django.contrib.admin.apps import AdminConfig


class BackOfficeAdminConfig(AdminConfig):
    """Django's admin, on the back-office site (baccarat_site.admin.BackOfficeAdminSite)."""

    default_site = "baccarat_site.admin.BackOfficeAdminSite"
