"""Text the database can store: no NUL character (PostgreSQL refuses it in any text) and no lone
surrogate (it cannot be encoded as UTF-8). Such text is refused before it reaches a query."""

import re

UNSTORABLE_MESSAGE = "Text may not contain NUL characters or lone surrogates."
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def is_storable(text: str) -> bool:
    return _UNSTORABLE.search(text) is None
