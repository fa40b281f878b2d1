"""URL converters: an id in a URL is a number a bigint primary key can hold, or the URL names nothing."""

MAX_ID = 2**63 - 1


class IdConverter:
    """1 to 2^63 - 1 in ASCII digits; anything else matches no route (404)."""

    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 1 <= number <= MAX_ID:
            raise ValueError("not an id")
        return number

    def to_url(self, value) -> str:
        return str(value)
