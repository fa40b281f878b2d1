"""Step-up: actions that ask for a fresh second factor, entered within STEP_UP_MINUTES.

Approving, rejecting, adjusting, voiding, changing roles and issuing tokens. A code entered at
log-in counts as fresh for its first STEP_UP_MINUTES, as does one entered at the step-up page
(admin) or ``POST /api/v1/auth/step-up/`` (API).

- Admin views and actions: ``@step_up_required`` on ``view(request, …)``, ``view(self, request, …)``
  or an action ``(modeladmin, request, queryset)``. Without a fresh factor, the answer sends to the
  admin's step-up page, which comes back to the page (a form sent meanwhile is sent again from it).
- API views: ``FreshSecondFactor`` in ``permission_classes``. It holds session-authenticated calls
  only: a token's calls (game servers, scripts) have no second factor to enter.
"""

from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import SAFE_METHODS, BasePermission

from backoffice import second_factor

STEP_UP_MESSAGE = ("This action needs a fresh second factor: enter a code from your authenticator app "
                   "(once every {minutes:g} minutes).")


def is_fresh(request) -> bool:
    return second_factor.is_fresh(request, settings.STEP_UP_MINUTES)


def step_up_redirect(request) -> HttpResponseRedirect:
    """To the admin's step-up page, and back to this page (a GET of it) once the code is entered."""
    back = request.get_full_path() if request.method == "GET" else request.path
    messages.info(request, STEP_UP_MESSAGE.format(minutes=settings.STEP_UP_MINUTES))
    return HttpResponseRedirect(f"{reverse('admin:second_factor_step_up')}?{urlencode({'next': back})}")


def step_up_required(view):
    """An admin view or action that needs a fresh second factor."""

    @wraps(view)
    def checked(*args, **kwargs):
        request = next(arg for arg in args if isinstance(arg, HttpRequest))
        if not is_fresh(request):
            return step_up_redirect(request)
        return view(*args, **kwargs)

    return checked


def _for_changers(model_admin, view):
    guarded = step_up_required(view)

    @wraps(view)
    def choose(request, *args, **kwargs):
        if request.method == "POST" or model_admin.has_change_permission(request):
            return guarded(request, *args, **kwargs)
        return view(request, *args, **kwargs)  # a reader (a regulator) reads without one

    return choose


def require_step_up_on(model_admin, *view_names: str) -> None:
    """Wrap views of a registered ModelAdmin (Django's user and group admins) before its URLs are made:
    whoever may change asks for a fresh factor before the form, so nothing typed is lost."""
    for name in view_names:
        setattr(model_admin, name, _for_changers(model_admin, getattr(model_admin, name)))


class FreshSecondFactor(BasePermission):
    """A session-authenticated write (not GET, HEAD or OPTIONS) needs a second factor entered within
    STEP_UP_MINUTES (403, ``step_up_required``); a token's call passes."""

    code = "step_up_required"

    @property
    def message(self):
        return (STEP_UP_MESSAGE.format(minutes=settings.STEP_UP_MINUTES)
                + " Send it to POST /api/v1/auth/step-up/ as {\"code\": \"…\"}, then repeat the request.")

    def has_permission(self, request, view):
        if request.method in SAFE_METHODS or not isinstance(request.successful_authenticator, SessionAuthentication):
            return True
        return is_fresh(request._request)
