"""JSON in: numbers read exactly, bounded nesting, and only text the database can store.

- Numbers with a fraction or an exponent become ``Decimal`` (never a binary float), so money and
  multipliers are read exactly as sent.
- The non-standard literals NaN, Infinity and -Infinity are refused, naming the top-level field.
- Nesting deeper than ``MAX_JSON_DEPTH`` is refused (a 2 KB body nested 1,000 deep must not
  reach Python's recursion limit), as is any text holding a NUL or a lone surrogate, which
  PostgreSQL cannot store.
"""

import codecs
import json
from decimal import Decimal

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser as DRFJSONParser

from backoffice.text import UNSTORABLE_MESSAGE, is_storable

MAX_JSON_DEPTH = 32
NON_FINITE_MESSAGE = "{literal} is not a number JSON allows; send a finite decimal number as a string."
DEPTH_MESSAGE = f"JSON nested deeper than {MAX_JSON_DEPTH} levels is not accepted."


class _NonFinite:
    def __init__(self, literal: str):
        self.literal = literal


def _problem(value) -> str | None:
    """Why a parsed value is refused (None if it is fine), walked without recursion."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, _NonFinite):
            return NON_FINITE_MESSAGE.format(literal=item.literal)
        if isinstance(item, str):
            if not is_storable(item):
                return UNSTORABLE_MESSAGE
        elif isinstance(item, dict | list):
            if depth > MAX_JSON_DEPTH:
                return DEPTH_MESSAGE
            if isinstance(item, dict):
                stack.extend((key, depth) for key in item)
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)
    return None


class JSONParser(DRFJSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.load(codecs.getreader(encoding)(stream), parse_constant=_NonFinite, parse_float=Decimal)
        except RecursionError:
            raise ParseError(DEPTH_MESSAGE) from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        if isinstance(data, dict):
            bad = {name: problem for name, value in data.items() if (problem := _problem(value))}
            if bad:
                raise ParseError({name: [problem] for name, problem in bad.items()})
        problem = _problem(data)
        if problem:
            raise ParseError(problem)
        return data
