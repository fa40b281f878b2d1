"""Streamed CSV exports of admin lists.

``csv_response`` is the one streaming helper: it writes rows with ``csv.writer`` onto a buffer that
keeps nothing (``Echo``) and reads the queryset with ``iterator(chunk_size=...)``, so an export of
millions of rows never holds more than one chunk in memory. An ``Export`` names the columns and
builds a row from one object; the admin hands it the queryset of the changelist being viewed.

Every cell of every row goes through ``safe_cell`` as it is written, so that a spreadsheet never runs
any part of one as a formula, whichever of comma, semicolon or tab it splits the line on. A
spreadsheet that splits ``x;=1+1;y`` on ``;`` gets the cell ``=1+1``: a ``'`` in front of the whole
value would not help. So a ``'`` goes in front of every fragment that could start a formula: where
the value starts, or after a separator (``,`` ``;`` tab, or a line break) and any spaces or double
quotes, a ``=``, ``+``, ``-``, ``@``, tab or carriage return (or a full-width ``=`` ``+`` ``-`` ``@``)
gets a ``'`` before it (``x;'=1+1;y``). A ``'`` already there gets one more, so that removing one
``'`` at each such place always gives the value back. A cell that is a plain number (``-1.25``) is
written as it is.
"""

import csv
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone

CHUNK_SIZE = 2000
# Rows are sent in pieces of about this many characters rather than one line at a time.
FLUSH_CHARS = 64 * 1024
# Where a spreadsheet may start a cell: the value's start, or after a separator it may split on
# (comma, semicolon, tab; a line break ends the row), past spaces or double quotes it may drop.
# A ' goes there when a formula character (or a ' of the value) follows.
FRAGMENT_START = re.compile(r'(\A|[,;\t\r\n])([ "]*)(?=[\'=+\-@\t\r\uff1d\uff0b\uff0d\uff20])')
PLAIN_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


class Echo:
    """A file-like object whose write returns what it was given (csv.writer's output, unbuffered)."""

    def write(self, value):
        return value


# --- Cells ----------------------------------------------------------------------------------------

def safe_cell(value) -> str:
    """A cell as written: a ``'`` before each fragment that could start a formula (or starts with
    ``'``), whichever separator a spreadsheet splits on; a plain number as it is."""
    value = "" if value is None else str(value)
    if PLAIN_NUMBER.fullmatch(value):
        return value
    return FRAGMENT_START.sub(r"\1\2'", value)


def text(value) -> str:
    """Typed text (``safe_cell`` makes it, like every cell, safe to open in a spreadsheet)."""
    return "" if value is None else str(value)


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
        yield writer.writerow([safe_cell(name) for name in export.header])
        pending, size = [], 0
        for row in export.rows(queryset):
            line = writer.writerow([safe_cell(value) for value in row])
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
