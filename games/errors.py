"""Errors the services raise; the API and the admin turn them into a 4xx or a form error.

Bad input is Django's ValidationError with a dict naming the field. A request that is well-formed
but conflicts with the state of things (a round no longer open, a reused idempotency key, a
rotation while rounds are open) is a Conflict, also naming the field.
"""


class Conflict(Exception):
    status_code = 409  # the HTTP status the API answers with (backoffice.api.exceptions)

    def __init__(self, field: str, message: str, code: str = "conflict"):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.code = code

    @property
    def message_dict(self) -> dict:
        return {self.field: [self.message]}
