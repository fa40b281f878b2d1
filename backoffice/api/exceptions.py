"""Errors as JSON: every 4xx body names the field (or ``detail``) and the reason.

The services raise Django's ValidationError (bad input, with a dict naming the field: 400) and the
kernel's application errors (core.errors: a Conflict, a request at odds with the state of things,
is a 409; an Unavailable, a missing configuration, a 503), each naming the field. DRF knows neither,
so this handler turns them into JSON responses, the one place where an application error becomes
an HTTP status, and leaves every other error to DRF's own handler.
"""

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from core.errors import ApplicationError, Conflict, Unavailable


def validation_error_detail(error: DjangoValidationError) -> dict:
    """{field: [messages]} from a Django ValidationError, with or without a field dict."""
    if hasattr(error, "error_dict"):
        return {
            (api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD_ERRORS else field): messages
            for field, messages in error.message_dict.items()
        }
    return {api_settings.NON_FIELD_ERRORS_KEY: error.messages}


# The HTTP status of each kind of application error (the most specific class that matches).
APPLICATION_ERROR_STATUS = {Conflict: status.HTTP_409_CONFLICT, Unavailable: status.HTTP_503_SERVICE_UNAVAILABLE,
                            ApplicationError: status.HTTP_400_BAD_REQUEST}


def error_status_and_body(exc) -> tuple[int, dict] | None:
    """(HTTP status, {field: [messages]}) for a service's error; None for any other exception."""
    if isinstance(exc, DjangoValidationError):
        return status.HTTP_400_BAD_REQUEST, validation_error_detail(exc)
    if isinstance(exc, ApplicationError):
        code = next(code for kind, code in APPLICATION_ERROR_STATUS.items() if isinstance(exc, kind))
        return code, exc.message_dict
    return None


def exception_handler(exc, context):
    answer = error_status_and_body(exc)
    if answer is None:
        return drf_exception_handler(exc, context)
    set_rollback()
    code, body = answer
    return Response(body, status=code)
