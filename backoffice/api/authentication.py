"""What every token authentication of the API shares: DRF's ``Authorization: Token …`` header,
the permissions of a user read within the token's own statement, and the refusals.

Every refusal (an unknown, disabled or expired token, one used from an address it does not allow or
beyond its scopes, an inactive owner, a malformed header) sends ``token_refused`` once a request
(with request=, outcome=, username= the owner's name or "", token_id= or None; never the token),
which the site records in the authentication log. An accepted token sends nothing. The token model
itself belongs to an app (apitokens.authentication), which backoffice does not import.
"""

from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.dispatch import Signal
from rest_framework import authentication, exceptions

token_refused = Signal()  # sent with request=, outcome=, username=, token_id=
UNKNOWN, INACTIVE, MALFORMED = "unknown_token", "inactive_user", "malformed_token"
EXPIRED, DISABLED, WRONG_ADDRESS, WRONG_SCOPE = "expired_token", "disabled_token", "wrong_address", "wrong_scope"


class Refused(exceptions.AuthenticationFailed):
    """DRF's 401, naming why (``outcome``) and whose token it was, if known."""

    def __init__(self, detail, outcome: str, username: str = "", token_id: int | None = None):
        super().__init__(detail)
        self.outcome, self.username, self.token_id = outcome, username, token_id


def send_refusal(request, outcome: str, username: str = "", token_id: int | None = None) -> None:
    """``token_refused``, once a request: the short way of a plain bet (backoffice.api.plain) tries
    the token and the permissions before DRF's dispatch tries them again."""
    http_request = getattr(request, "_request", request)
    if not getattr(http_request, "token_refusal_sent", False):
        http_request.token_refusal_sent = True
        token_refused.send(sender=TokenAuthentication, request=request, outcome=outcome, username=username,
                           token_id=token_id)


def permissions_of_u() -> str:
    """Every permission for a superuser, else those user ``u`` holds directly or by a group: what
    ModelBackend.get_all_permissions reads, as a JSON array of "app_label.codename" (NULL for none)."""
    return f"""(SELECT json_agg(ct.app_label || '.' || p.codename)
        FROM {Permission._meta.db_table} p JOIN {ContentType._meta.db_table} ct ON ct.id = p.content_type_id
        WHERE u.is_superuser
           OR p.id IN (SELECT permission_id FROM {User.user_permissions.through._meta.db_table} WHERE user_id = u.id
                       UNION SELECT gp.permission_id FROM {Group.permissions.through._meta.db_table} gp
                             JOIN {User.groups.through._meta.db_table} ug ON ug.group_id = gp.group_id
                             WHERE ug.user_id = u.id))"""


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token header and answers (401 with ``WWW-Authenticate: Token``); a subclass reads the
    token in ``authenticate_credentials``, with the request at hand as ``self.request``."""

    def authenticate(self, request):
        self.request = request
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed as refusal:
            send_refusal(request, getattr(refusal, "outcome", MALFORMED), getattr(refusal, "username", ""),
                         getattr(refusal, "token_id", None))
            raise
