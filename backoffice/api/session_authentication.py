"""The admin's session as API authentication, once its second factor is verified.

A session signed in with the password only (its second factor still to enter or to enrol) is refused
with a 401 naming the admin page where the code is entered: no session-authenticated API call works
before it. Token requests never get here with a session of theirs (token authentication comes first).
"""

from drf_spectacular.authentication import SessionScheme
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import AuthenticationFailed

from backoffice import second_factor

NOT_VERIFIED = "This session's second factor is not verified: enter a code from your authenticator app at /admin/."


class VerifiedSessionAuthentication(SessionAuthentication):
    def authenticate(self, request):
        result = super().authenticate(request)
        if result is not None and not second_factor.is_verified(request._request):
            raise AuthenticationFailed(NOT_VERIFIED, code="second_factor_required")
        return result


class VerifiedSessionScheme(SessionScheme):
    """The schema's cookieAuth, as for Django REST framework's session authentication."""

    target_class = VerifiedSessionAuthentication
