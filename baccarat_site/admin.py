"""The back-office admin site: Django's admin with the operations dashboard as one of its pages."""

from django.contrib import admin
from django.urls import path, reverse

from settlement.dashboard import PERMISSION as DASHBOARD_PERMISSION
from settlement.dashboard import dashboard_view


class BackOfficeAdminSite(admin.AdminSite):
    site_header = "Baccarat back-office"
    site_title = "Baccarat back-office"
    index_title = "Operations"

    def get_urls(self):
        dashboard = self.admin_view(lambda request: dashboard_view(request, self))
        return [path("dashboard/", dashboard, name="dashboard"), *super().get_urls()]

    def get_app_list(self, request, app_label=None):
        """The apps, and first "Reports → Operations dashboard" for those who may see it."""
        app_list = super().get_app_list(request, app_label)
        if app_label is None and request.user.has_perm(DASHBOARD_PERMISSION):
            url = reverse("admin:dashboard", current_app=self.name)
            app_list.insert(0, {
                "name": "Reports", "app_label": "reports", "app_url": url, "has_module_perms": True,
                "models": [{"name": "Operations dashboard", "object_name": "Dashboard", "admin_url": url,
                            "add_url": None, "view_only": True, "perms": {"view": True}}],
            })
        return app_list
