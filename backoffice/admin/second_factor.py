"""The admin's second-factor pages (backoffice.second_factor) and the administrator's reset.

- ``/admin/second-factor/``: after the password, the code (or a recovery code); at first log-in the
  enrolment instead: the QR code and the secret of a new TOTP device, confirmed by its first code,
  then the recovery codes, shown once.
- ``/admin/second-factor/step-up/``: a fresh code for the actions that ask for one (backoffice.step_up).
- "Reset second factor" on users (administrators; audited): the person enrols again at next log-in.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect

from backoffice import second_factor
from backoffice.step_up import step_up_required

TEMPLATE = "admin/second_factor.html"


class CodeForm(forms.Form):
    code = forms.CharField(label="Code", max_length=32, strip=True, widget=forms.TextInput(attrs={
        "autocomplete": "one-time-code", "autofocus": True, "spellcheck": "false", "autocapitalize": "off"}))


def _next_url(request, site) -> str:
    """Where to go once the code is in: the page asked for, if it is one of ours."""
    target = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME, "")
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return reverse("admin:index", current_app=site.name)


def _page(request, site, *, mode: str, form, **extra):
    context = {**site.each_context(request), "mode": mode, "form": form, "next": _next_url(request, site),
               "title": extra.pop("title"), **extra}
    return render(request, TEMPLATE, context)


def _refusal(form, outcome: str) -> None:
    if outcome == second_factor.REFUSED_LOCKED:
        form.add_error("code", second_factor.locked_message())
    elif outcome == second_factor.WRONG_CODE:
        form.add_error("code", "Wrong code. Enter the code your authenticator app shows now (or a recovery code).")


@never_cache
@csrf_protect
def second_factor_view(request, site):
    """After the password: enter the code, or enrol at first log-in."""
    if not request.user.is_authenticated or not request.user.is_active or not request.user.is_staff:
        return HttpResponseRedirect(reverse("admin:login", current_app=site.name))
    if second_factor.is_verified(request):
        return HttpResponseRedirect(_next_url(request, site))
    form = CodeForm(request.POST or None)
    if not second_factor.is_enrolled(request.user):
        if request.method == "POST" and form.is_valid():
            codes = second_factor.confirm_enrolment(request, form.cleaned_data["code"])
            if isinstance(codes, list):
                return _page(request, site, mode="recovery_codes", form=None, codes=codes,
                             title="Your recovery codes")
            _refusal(form, codes)
        if (device := second_factor.enrolment_device(request.user)) is not None:
            uri = second_factor.otpauth_uri(device)
            return _page(request, site, mode="enrol", form=form, qr_code=second_factor.qr_data_uri(uri),
                         secret=second_factor.secret_text(device), title="Set up your second factor")
        # Enrolled meanwhile, by another tab: this one asks for a code, as at every sign-in.
        return _page(request, site, mode="verify", form=CodeForm(), title="Second factor")
    if request.method == "POST" and form.is_valid():
        outcome = second_factor.verify(request, form.cleaned_data["code"], second_factor.LOG_IN)
        if outcome == second_factor.RECOVERY_CODE:
            messages.warning(request, "You signed in with a recovery code, which is now used up. Ask an administrator "
                                      "to reset your second factor if your authenticator app is lost.")
        if outcome in (second_factor.SUCCEEDED, second_factor.RECOVERY_CODE):
            return HttpResponseRedirect(_next_url(request, site))
        _refusal(form, outcome)
    return _page(request, site, mode="verify", form=form, title="Second factor")


def step_up_view(request, site):
    """A fresh code (served through the admin's own checks: a verified session only)."""
    form = CodeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        outcome = second_factor.verify(request, form.cleaned_data["code"], second_factor.STEP_UP)
        if outcome in (second_factor.SUCCEEDED, second_factor.RECOVERY_CODE):
            return HttpResponseRedirect(_next_url(request, site))
        _refusal(form, outcome)
    return _page(request, site, mode="step_up", form=form, title="Confirm with your second factor")


@step_up_required
@admin.action(description="Reset second factor: the selected users enrol again at their next log-in",
              permissions=["change"])
def reset_second_factor(modeladmin, request, queryset):
    names = []
    for user in queryset.order_by("username"):
        second_factor.reset(user, by=request.user)
        names.append(user.get_username())
    modeladmin.message_user(request, f"Second factor reset for {len(names)} user(s): {', '.join(names)}. Their "
                                     "sessions have ended; each enrols again at the next log-in.", messages.SUCCESS)


def add_reset_action(model_admin) -> None:
    """Add the reset to a user admin (Django's, registered by django.contrib.auth)."""
    actions = list(model_admin.actions or [])
    if reset_second_factor not in actions:
        model_admin.actions = [*actions, reset_second_factor]
