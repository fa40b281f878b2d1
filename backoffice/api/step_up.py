"""``POST /api/v1/auth/step-up/``: a fresh second factor for the session's next STEP_UP_MINUTES
(backoffice.step_up), for the API calls that ask for one. Session only: a token has no second factor."""

from datetime import UTC, datetime

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from backoffice import second_factor, staff_sessions
from backoffice.api.serializers import StrictCharField, StrictInputMixin
from backoffice.api.views import ERRORS, ApiView, validated


class StepUpSerializer(StrictInputMixin, serializers.Serializer):
    code = StrictCharField(max_length=32, help_text="A code of the authenticator app, or a recovery code.")


class StepUpAnswerSerializer(serializers.Serializer):
    fresh_until = serializers.DateTimeField(help_text="Until when the actions that ask for a fresh factor pass.")


class StepUpView(ApiView):
    required_permissions = {"POST": ()}  # any signed-in person; only a session's call has a factor to enter
    throttle_classes = []  # wrong codes are counted and locked out (backoffice.lockout) instead

    @extend_schema(tags=["auth"], summary="Enter a fresh second factor (session only)", request=StepUpSerializer,
                   responses={200: StepUpAnswerSerializer, **ERRORS,
                              429: OpenApiResponse(description="Too many wrong codes: the second factor is locked.")})
    def post(self, request):
        if not isinstance(request.successful_authenticator, SessionAuthentication):
            raise PermissionDenied("Only a signed-in session (the admin's) has a second factor to enter.")
        data = validated(StepUpSerializer, request.data)
        outcome = second_factor.verify(request._request, data["code"], second_factor.STEP_UP)
        if outcome == second_factor.REFUSED_LOCKED:
            return Response({"code": [second_factor.locked_message()]}, status=status.HTTP_429_TOO_MANY_REQUESTS)
        if outcome == second_factor.WRONG_CODE:
            return Response({"code": ["Wrong code."]}, status=status.HTTP_400_BAD_REQUEST)
        until = staff_sessions.clock() + settings.STEP_UP_MINUTES * 60
        return Response({"fresh_until": datetime.fromtimestamp(until, UTC).isoformat()})
