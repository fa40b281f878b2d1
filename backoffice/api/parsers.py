"""JSON in, with NaN and Infinity answered field by field.

Python's json module reads the non-standard literals NaN, Infinity and -Infinity; DRF's strict
parser rejects them as a parse error that names no field. This parser rejects them too, but says
which top-level field held one, so a client that sent ``{"tie_multiplier": NaN}`` learns why.
"""

import codecs
import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser as DRFJSONParser

NON_FINITE_MESSAGE = "{literal} is not a number JSON allows; send a finite decimal number as a string."


class _NonFinite:
    def __init__(self, literal: str):
        self.literal = literal


def _contains_non_finite(value) -> _NonFinite | None:
    if isinstance(value, _NonFinite):
        return value
    if isinstance(value, dict):
        value = value.values()
    if isinstance(value, (list, type({}.values()))):
        for item in value:
            found = _contains_non_finite(item)
            if found:
                return found
    return None


class JSONParser(DRFJSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.load(codecs.getreader(encoding)(stream), parse_constant=_NonFinite)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        if isinstance(data, dict):
            bad = {name: found for name, value in data.items() if (found := _contains_non_finite(value))}
            if bad:
                raise ParseError({name: [NON_FINITE_MESSAGE.format(literal=found.literal)]
                                  for name, found in bad.items()})
        found = _contains_non_finite(data)
        if found:
            raise ParseError(NON_FINITE_MESSAGE.format(literal=found.literal))
        return data
