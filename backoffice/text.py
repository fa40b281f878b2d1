"""Text rules of the presentation: decimals as written, and text the database can store.

Text the database can store: no NUL character (PostgreSQL refuses it in any text) and no lone
surrogate (it cannot be encoded as UTF-8). Such text is refused before it reaches a query."""

import re

# A decimal as text: ASCII digits, an optional sign and point; no exponent, underscore or
# full-width digit (Python's Decimal reads all of those, and money must be read as written).
DECIMAL_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")
DECIMAL_TEXT_MESSAGE = "Must be a decimal number written in ASCII digits, such as 10.50."

UNSTORABLE_MESSAGE = "Text may not contain NUL characters or lone surrogates."
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def is_storable(text: str) -> bool:
    return _UNSTORABLE.search(text) is None
