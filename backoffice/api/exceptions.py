"""Errors as JSON: every 4xx body names the field (or ``detail``) and the reason.

The services raise Django's ValidationError (bad input, with a dict naming the field) and errors
of their own that carry an HTTP ``status_code`` and a ``message_dict`` naming the field (such as
games.errors.Conflict, a request at odds with the state of things: 409). DRF knows neither, so
this handler turns them into JSON responses, and leaves every other error to DRF's own handler.
"""

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback


def validation_error_detail(error: DjangoValidationError) -> dict:
    """{field: [messages]} from a Django ValidationError, with or without a field dict."""
    if hasattr(error, "error_dict"):
        return {
            (api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD_ERRORS else field): messages
            for field, messages in error.message_dict.items()
        }
    return {api_settings.NON_FIELD_ERRORS_KEY: error.messages}


def is_service_error(exc) -> bool:
    """A service's error that says how to answer: an HTTP status and {field: [messages]}."""
    return isinstance(getattr(exc, "status_code", None), int) and hasattr(exc, "message_dict") \
        and not isinstance(exc, DjangoValidationError)


def error_status_and_body(exc) -> tuple[int, dict] | None:
    """(HTTP status, {field: [messages]}) for a service's error; None for any other exception."""
    if isinstance(exc, DjangoValidationError):
        return status.HTTP_400_BAD_REQUEST, validation_error_detail(exc)
    if is_service_error(exc):
        return exc.status_code, exc.message_dict
    return None


def exception_handler(exc, context):
    answer = error_status_and_body(exc)
    if answer is None:
        return drf_exception_handler(exc, context)
    set_rollback()
    code, body = answer
    return Response(body, status=code)
