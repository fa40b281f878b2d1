"""The back-office admin site: Django's admin with its titles, and pages of its own.

A page that belongs to no model (the operations dashboard) is registered by the app that owns it,
from its admin module: ``admin.site.register_page(SitePage(...))``. The site serves it under
/admin/<route> (URL name ``admin:<name>``) to staff with its permission, and lists it first on the
index, under its section, for those who may open it.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial, update_wrapper
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.dispatch import Signal
from django.http import HttpResponseRedirect
from django.urls import path, reverse

from backoffice import second_factor
from backoffice.admin.second_factor import second_factor_view, step_up_view
from backoffice.formatting import EMPTY
from backoffice.lockout import LOCKED, LOCKED_MESSAGE, REFUSED_ATTRIBUTE, SLOWED, SLOWED_MESSAGE

# Sent with request= and user= when the right password of a user who may not use the admin (not
# staff: an integration client) is refused; the site records it in the authentication log.
staff_login_refused = Signal()


@dataclass(frozen=True)
class SitePage:
    route: str  # "dashboard/"
    name: str  # the URL name, without the "admin:" namespace
    title: str  # its entry on the index
    section: str  # the heading of that entry ("Reports")
    permission: str  # "app_label.codename"
    view: Callable  # view(request, site) -> response


class LockoutAuthenticationForm(AdminAuthenticationForm):
    """Django's admin log-in, saying so when the user name is locked out or slowed down here
    (backoffice.lockout)."""

    def confirm_login_allowed(self, user):
        try:
            super().confirm_login_allowed(user)
        except ValidationError:
            staff_login_refused.send(sender=type(self), request=self.request, user=user)
            raise

    def clean(self):
        try:
            return super().clean()
        except ValidationError:
            refused = getattr(self.request, REFUSED_ATTRIBUTE, None)  # set by the backend
            if refused == LOCKED:
                minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
                raise ValidationError(LOCKED_MESSAGE.format(minutes=minutes), code="locked_out") from None
            if refused == SLOWED:
                raise ValidationError(SLOWED_MESSAGE.format(seconds=settings.LOGIN_SLOWDOWN_SECONDS),
                                      code="slowed_down") from None
            raise


class BackOfficeAdminSite(admin.AdminSite):
    login_form = LockoutAuthenticationForm
    site_header = "Baccarat back-office"
    site_title = "Baccarat back-office"
    index_title = "Operations"

    def __init__(self, name="admin"):
        super().__init__(name)
        self._pages: list[SitePage] = []
        self._dashboard_panels: list[Callable] = []

    def register_page(self, page: SitePage) -> None:
        self._pages.append(page)

    def register_dashboard_panel(self, panel: Callable) -> None:
        """``panel(request)`` returns HTML for the top of the operations dashboard ("" for nothing). Apps
        above the dashboard's own (the alerts) register theirs from their admin module."""
        self._dashboard_panels.append(panel)

    def dashboard_panels(self, request) -> list:
        return [html for panel in self._dashboard_panels if (html := panel(request))]

    def each_context(self, request):
        # Templates write a missing value as the code does.
        return {**super().each_context(request), "empty_value": EMPTY}

    def has_permission(self, request):
        """Staff, with the second factor entered (backoffice.second_factor)."""
        return super().has_permission(request) and second_factor.is_verified(request)

    def _to_second_factor(self, request, back: str | None = None):
        url = reverse("admin:second_factor", current_app=self.name)
        return HttpResponseRedirect(f"{url}?{urlencode({'next': back or request.get_full_path()})}")

    def admin_view(self, view, cacheable=False):
        """Every admin page and action: a person signed in with the password only is sent to enter
        (or enrol) the second factor first; only the log-out is open to them."""
        inner = super().admin_view(view, cacheable)

        def gate(request, *args, **kwargs):
            if second_factor.is_pending(request):
                if request.path == reverse("admin:logout", current_app=self.name):
                    return view(request, *args, **kwargs)
                return self._to_second_factor(request)
            return inner(request, *args, **kwargs)

        return update_wrapper(gate, inner)

    def login(self, request, extra_context=None):
        if second_factor.is_pending(request) and request.method == "GET":
            return self._to_second_factor(request, request.GET.get("next") or reverse("admin:index",
                                                                                       current_app=self.name))
        return super().login(request, extra_context)

    def _serve_page(self, request, page: SitePage):
        if not request.user.has_perm(page.permission):
            raise PermissionDenied(page.permission)
        request.current_app = self.name
        return page.view(request, self)

    def get_urls(self):
        pages = [path(page.route, self.admin_view(partial(self._serve_page, page=page)), name=page.name)
                 for page in self._pages]
        codes = [path("second-factor/", partial(second_factor_view, site=self), name="second_factor"),
                 path("second-factor/step-up/", self.admin_view(partial(step_up_view, site=self)),
                      name="second_factor_step_up")]
        return [*codes, *pages, *super().get_urls()]

    def get_app_list(self, request, app_label=None):
        """The apps, and first the sections of the site's own pages the user may open."""
        app_list = super().get_app_list(request, app_label)
        if app_label is not None:
            return app_list
        sections: dict[str, dict] = {}
        for page in self._pages:
            if not request.user.has_perm(page.permission):
                continue
            url = reverse(f"admin:{page.name}", current_app=self.name)
            section = sections.setdefault(page.section, {
                "name": page.section, "app_label": page.section.lower(), "app_url": url, "has_module_perms": True,
                "models": [],
            })
            section["models"].append({"name": page.title, "object_name": page.name.title(), "admin_url": url,
                                      "add_url": None, "view_only": True, "perms": {"view": True}})
        return [*sections.values(), *app_list]
