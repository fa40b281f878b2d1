"""The administrator's unlock: the "Unlock log-ins" action on users (backoffice.lockout).

The site adds it to the user admin (baccarat_site.apps); it needs the permission to change users,
which only administrators hold. Each unlock is recorded in the audit trail (``login_unlocked``)."""

from django.contrib import admin, messages

from backoffice import lockout


@admin.action(description="Unlock log-ins: end the selected users' lock-outs and slow-downs", permissions=["change"])
def unlock_log_ins(modeladmin, request, queryset):
    names = []
    for user in queryset.order_by("username"):
        lockout.unlock(user.get_username(), by=request.user, user=user)
        names.append(user.get_username())
    modeladmin.message_user(request, f"Log-ins unlocked for {len(names)} user(s): {', '.join(names)}.",
                            messages.SUCCESS)


def add_unlock_action(model_admin) -> None:
    """Add the action to a user admin (Django's, registered by django.contrib.auth)."""
    actions = list(model_admin.actions or [])
    if unlock_log_ins not in actions:
        model_admin.actions = [*actions, unlock_log_ins]
