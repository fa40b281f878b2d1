"""Every endpoint checks a Django permission (the role matrix of games.roles) per HTTP method."""

from rest_framework.permissions import BasePermission

from backoffice.api.authentication import WRONG_SCOPE, send_refusal


class RolePermission(BasePermission):
    """The view's ``required_permissions`` maps an HTTP method to the permission it needs.

    Anonymous requests fail (DRF answers 401, since token authentication comes first and sends
    WWW-Authenticate); an authenticated user without the permission gets 403. Superusers hold
    every permission. A method the view does not declare is let through only when the view does
    not implement it either, so DRF answers 405. A request by token must also be within the token's
    scopes (``request.auth.allows(permission)``): beyond them it gets 403 and the authentication log
    records the refused token (``wrong_scope``).
    """

    message = "You do not have permission to perform this action."

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        method = "GET" if request.method == "HEAD" else request.method
        if method == "OPTIONS":
            return True
        required = getattr(view, "required_permissions", {}).get(method)
        if required is None:
            return not hasattr(view, method.lower())
        if isinstance(required, str):
            required = (required,)
        missing = [perm for perm in required if not user.has_perm(perm)]
        if missing:
            self.message = f"This needs the permission {', '.join(missing)}, which your role does not hold."
            return False
        allows = getattr(getattr(request, "auth", None), "allows", None)
        beyond = [perm for perm in required if allows is not None and not allows(perm)]
        if beyond:
            self.message = (f"This needs the permission {', '.join(beyond)}, which this token's scopes "
                            f"({', '.join(request.auth.scopes)}) do not cover.")
            send_refusal(request, WRONG_SCOPE, user.get_username(), request.auth.pk)
            return False
        return True
