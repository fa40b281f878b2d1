"""Log lines that name their request or task (audit.context): a filter that puts the request id,
user, game, round and bet on every record a handler writes, the JSON formatter of LOG_FORMAT=json
(one object a line) and the text one of "plain".

Our own formatter (the standard library's json) rather than python-json-logger: it is a few lines,
no dependency, and it writes only what it is meant to: the fixed fields, the context, and extras
that are plain values (python-json-logger would write any extra through ``str``, a request's
``repr`` with its query string among them). Every text it writes has runs of 40 or more hex
digits replaced, in both formats: an unrevealed server seed is 64, an API token 40 (a seed's public
hash goes too), and with DEBUG Django logs every SQL statement with its parameters.
"""

import json
import logging
import logging.config
import re
from datetime import UTC, datetime

from audit.context import LOG_FIELDS, log_fields

CONTEXT_FIELDS = ("request_id", *LOG_FIELDS)
_SECRET_LIKE = re.compile(r"[0-9A-Fa-f]{40,}")
REDACTED = "[hex redacted]"
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


def redact(text: str) -> str:
    return _SECRET_LIKE.sub(REDACTED, text)


class ContextFilter(logging.Filter):
    """Adds the context's fields to each record (a field the call passed in ``extra`` is kept)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in log_fields().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


class PlainFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601, milliseconds), level, logger, message, the context
    fields known, extras of plain value (str, int, float, bool), and the exception's traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        for name in CONTEXT_FIELDS:
            value = getattr(record, name, None)
            if value not in (None, ""):
                line[name] = value
        for name, value in vars(record).items():
            if name not in _RECORD_ATTRIBUTES and name not in line and isinstance(value, str | int | float | bool):
                line[name] = redact(value) if isinstance(value, str) else value
        if record.exc_info:
            line["exception"] = redact(self.formatException(record.exc_info))
        if record.stack_info:
            line["stack"] = redact(self.formatStack(record.stack_info))
        return json.dumps(line, ensure_ascii=False, default=str)


def logging_config(log_format: str, level: str) -> dict:
    """The LOGGING setting: every line through one console handler that adds the context; as text
    ("plain") or JSON ("json"). With JSON, Django's own loggers (the development server's, and with
    DEBUG its console) write through it too, so no line is left as text, and no SQL statement is logged."""
    if log_format not in ("plain", "json"):
        raise ValueError(f"LOG_FORMAT must be plain or json, not {log_format!r}")
    config = {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": ContextFilter}},
        "formatters": {"plain": {"()": PlainFormatter, "format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
                       "json": {"()": JsonFormatter}},
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": log_format, "filters": ["context"]}},
        "root": {"handlers": ["console"], "level": level},
        # Django's own loggers keep INFO and their handlers otherwise, so LOG_LEVEL would not hold back
        # their messages (one warning for every 404) and, with DEBUG, each would print twice.
        "loggers": {"django": {"level": level}},
    }
    if log_format == "json":
        # No SQL with its parameters (seeds, session keys) in these logs, whatever LOG_LEVEL and DEBUG say.
        sql_level = level if logging.getLevelName(level) in range(logging.INFO, logging.CRITICAL + 1) else "INFO"
        config["loggers"] = {"django": {"level": level, "handlers": [], "propagate": True},
                             "django.server": {"level": level, "handlers": [], "propagate": True},
                             "py.warnings": {"handlers": [], "propagate": True},
                             "django.db.backends": {"level": sql_level}}
    return config


def configure(config: dict) -> None:
    """Django's LOGGING_CONFIG: the configuration, and with JSON Python's warnings (a library's, at
    start-up) logged through it too instead of printed as text."""
    logging.config.dictConfig(config)
    if config.get("handlers", {}).get("console", {}).get("formatter") == "json":
        logging.captureWarnings(True)
