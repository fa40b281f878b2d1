"""The 403 page of the back-office: which permission the page needs, which roles hold it, the way back.

A view says what it needs by raising ``PermissionDenied("app_label.codename")``; Django's own admin
views raise it bare, and then the URL tells: an add, change or delete page needs that permission on
its model, any other page of a model (its list, its object pages, recall, exports) the view one.
Under /api/ the answer is JSON, like every other API error.
"""

import re

from django.contrib import admin
from django.contrib.auth.models import Permission
from django.http import JsonResponse
from django.template.response import TemplateResponse
from django.urls import Resolver404, resolve, reverse

from backoffice.roles import ROLE_PERMISSIONS, Role

PERMISSION_CODE = re.compile(r"[a-z_]+\.[a-z_]+")
MODEL_ACTIONS = {"add": "add", "change": "change", "delete": "delete", "password_change": "change"}


def needed_permission(request, exception) -> str | None:
    text = str(exception or "")
    if PERMISSION_CODE.fullmatch(text):
        return text
    try:
        url_name = resolve(request.path_info).url_name or ""
    except Resolver404:
        return None
    for model in admin.site._registry:
        prefix = f"{model._meta.app_label}_{model._meta.model_name}_"
        if url_name.startswith(prefix):
            action = MODEL_ACTIONS.get(url_name.removeprefix(prefix), "view")
            return f"{model._meta.app_label}.{action}_{model._meta.model_name}"
    return None


def roles_holding(permission: str) -> list:
    return [role.label for role, codes in ROLE_PERMISSIONS.items() if codes is None or permission in codes]


def permission_name(permission: str) -> str:
    app_label, codename = permission.split(".")
    found = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
    return found.name if found else permission


def permission_denied(request, exception=None):
    permission = needed_permission(request, exception)
    if request.path.startswith("/api/"):
        detail = "You do not have permission to perform this action."
        return JsonResponse({"detail": detail, **({"permission": permission} if permission else {})}, status=403)
    user = request.user
    own_roles = (list(user.groups.filter(name__in=Role.labels).values_list("name", flat=True))
                 if user.is_authenticated else [])
    # Back where the user came from, when that is a page of this site (and not this one).
    referer = request.META.get("HTTP_REFERER", "")
    same_site = referer.startswith(request.build_absolute_uri("/")) and referer != request.build_absolute_uri()
    back = referer if same_site else reverse("admin:index")
    context = {
        **admin.site.each_context(request),
        "title": "You may not open this page",
        "permission": permission,
        "permission_name": permission_name(permission) if permission else None,
        "roles": roles_holding(permission) if permission else [],
        "own_roles": own_roles,
        "back_url": back,
    }
    return TemplateResponse(request, "admin/403.html", context, status=403).render()
