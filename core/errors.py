"""The errors the services raise besides Django's ValidationError; the API (backoffice.api.exceptions)
and the admin turn them into a 4xx or a form error.

Bad input is Django's ValidationError with a dict naming the field (400). A request that is
well-formed but at odds with the state of things (a round no longer open, a reused idempotency key,
a rotation while rounds are open) is a Conflict (409), also naming the field. Each is an
ApplicationError: what the API maps to an HTTP status, in one place.
"""


class ApplicationError(Exception):
    """A refusal of a service that names the field it concerns, the reason and a stable code."""

    default_code = "invalid"

    def __init__(self, field: str, message: str, code: str | None = None):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.code = code or self.default_code

    @property
    def message_dict(self) -> dict:
        """{field: [message]}, as Django's ValidationError words its own."""
        return {self.field: [self.message]}


class Conflict(ApplicationError):
    """At odds with the state of things (HTTP 409)."""

    default_code = "conflict"


class Unavailable(ApplicationError):
    """Cannot be answered until the operator configures something, named as the field (HTTP 503)."""

    default_code = "unavailable"
