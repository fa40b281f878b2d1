"""Streamed CSV exports of admin lists.

``csv_response`` is the one streaming helper: it writes rows with ``csv.writer`` onto a buffer that
keeps nothing (``Echo``) and reads the queryset with ``iterator(chunk_size=...)``, so an export of
millions of rows never holds more than one chunk in memory. An ``Export`` names the columns and
builds a row from one object; the admin hands it the queryset of the changelist being viewed.

Free text that a person typed (reasons, ids chosen by operators or clients) goes through ``text``,
so that a spreadsheet never runs it as a formula: a leading ``=``, ``+``, ``-``, ``@``, tab or
carriage return gets a ``'`` in front (OWASP's advice). Amounts are numbers and are written as they are.
"""

import csv
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone

CHUNK_SIZE = 2000
# Rows are sent in pieces of about this many characters rather than one line at a time.
FLUSH_CHARS = 64 * 1024
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


class Echo:
    """A file-like object whose write returns what it was given (csv.writer's output, unbuffered)."""

    def write(self, value):
        return value


# --- Cells ----------------------------------------------------------------------------------------

def text(value) -> str:
    """Typed text, made safe to open in a spreadsheet."""
    value = "" if value is None else str(value)
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value


def when(value: datetime | None) -> str:
    return value.astimezone(UTC).isoformat() if value else ""


def boolean(value) -> str:
    return "" if value is None else ("true" if value else "false")


def optional(value) -> str:
    return "" if value is None else str(value)


def as_json(value) -> str:
    if value is None:
        return ""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- Streaming ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Export:
    name: str
    header: tuple
    row: Callable
    select_related: tuple = ()
    # Columns of other tables a row reads ({name: expression}), joined by the one query of the rows.
    annotations: dict = field(default_factory=dict)

    def rows(self, queryset: QuerySet) -> Iterable[list]:
        if self.select_related:
            queryset = queryset.select_related(*self.select_related)
        if self.annotations:
            queryset = queryset.annotate(**self.annotations)
        for obj in queryset.iterator(chunk_size=CHUNK_SIZE):
            yield self.row(obj)


def csv_response(export: Export, queryset: QuerySet) -> StreamingHttpResponse:
    """Stream ``queryset`` as CSV, chunk by chunk; nothing is read before the client starts reading."""
    writer = csv.writer(Echo())

    def generate():
        yield writer.writerow(export.header)
        pending, size = [], 0
        for row in export.rows(queryset):
            line = writer.writerow(row)
            pending.append(line)
            size += len(line)
            if size >= FLUSH_CHARS:
                yield "".join(pending)
                pending, size = [], 0
        if pending:
            yield "".join(pending)

    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response = StreamingHttpResponse(generate(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{export.name}-{stamp}.csv"'
    response["Cache-Control"] = "no-store"
    return response
